// Certificates for TLS tests, made with openssl in a temporary directory: a CA, a server
// certificate for 127.0.0.1/localhost signed by it, a client certificate signed by it and a
// self-signed client certificate no one trusts; renewed server certificates on demand. The caller
// removes the directory.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { X509Certificate } from 'node:crypto';

const run = promisify(execFile);

export interface TestPki {
  dir: string;
  /** File names inside dir. */
  files: { ca: string; serverCert: string; serverKey: string };
  ca: string;
  client: { cert: string; key: string };
  rogue: { cert: string; key: string };
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

/**
 * A renewed server certificate: a fresh key and a certificate for 127.0.0.1/localhost signed by
 * the PKI's CA, written as `<name>.key` and `<name>.crt` in its directory; their texts and the
 * certificate's serial number.
 */
export async function renewServerCertificate(pki: TestPki, name: string): Promise<{ cert: string; key: string; serial: string }> {
  await openssl(pki.dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
  await openssl(pki.dir, ['req', '-new', '-key', `${name}.key`, '-subj', '/CN=localhost', '-out', `${name}.csr`]);
  await openssl(pki.dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'server.ext', '-out', `${name}.crt`]);
  const cert = await readFile(join(pki.dir, `${name}.crt`), 'utf8');
  return { cert, key: await readFile(join(pki.dir, `${name}.key`), 'utf8'), serial: new X509Certificate(cert).serialNumber };
}

export async function makeTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'eoswatch-pki-'));
  const days = ['-days', '2'];
  const key = (name: string) => openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`]);
  await Promise.all(['ca', 'server', 'client', 'rogue'].map(key));
  await openssl(dir, ['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=eoswatch test CA', ...days, '-out', 'ca.crt', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  const signed = async (name: string, cn: string, ext: string) => {
    await openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${cn}`, '-out', `${name}.csr`]);
    await run('bash', ['-c', `printf '%s\\n' "${ext}" > ${name}.ext`], { cwd: dir });
    await openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', ...days, '-extfile', `${name}.ext`, '-out', `${name}.crt`]);
  };
  await signed('server', 'localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth');
  await signed('client', 'prometheus', 'subjectAltName=DNS:prometheus.monitoring.svc\nextendedKeyUsage=clientAuth');
  await openssl(dir, ['req', '-x509', '-new', '-key', 'rogue.key', '-subj', '/CN=prometheus', ...days, '-out', 'rogue.crt', '-addext', 'subjectAltName=DNS:prometheus.monitoring.svc']);
  const text = (f: string) => readFile(join(dir, f), 'utf8');
  return {
    dir,
    files: { ca: 'ca.crt', serverCert: 'server.crt', serverKey: 'server.key' },
    ca: await text('ca.crt'),
    client: { cert: await text('client.crt'), key: await text('client.key') },
    rogue: { cert: await text('rogue.crt'), key: await text('rogue.key') },
  };
}
