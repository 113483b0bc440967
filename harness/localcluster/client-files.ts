// Client configurations of a secured local cluster, written inside its directory (mode 0600) so
// that people and tools connect without the passwords ever being printed: a Java client
// properties file (kafka-*.sh --command-config) and an eoswatch `kafka:` section per user.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { LocalCluster } from './cluster.js';
import { propValue, userFiles } from './security.js';

export interface ClientFiles {
  ca: string;
  users: { user: string; properties: string; eoswatch: string }[];
}

export async function writeClientFiles(c: LocalCluster): Promise<ClientFiles> {
  const sec = c.security;
  if (!sec) throw new Error('writeClientFiles: a plaintext cluster needs no client files');
  const dir = join(c.dir, 'client');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const users: ClientFiles['users'] = [];
  for (const user of Object.keys(sec.passwords)) {
    const f = userFiles(sec, user);
    const withCert = sec.mode === 'ssl' || sec.mtls;
    const props = [
      `bootstrap.servers=${c.bootstrapServers}`,
      `security.protocol=${sec.mode === 'ssl' ? 'SSL' : 'SASL_SSL'}`,
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${f.caFile}`,
      ...(sec.mode === 'ssl' ? [] : ['sasl.mechanism=SCRAM-SHA-512', `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${sec.passwords[user]}";`]),
      // Inline: a PEM key store file would need an encrypted key.
      ...(withCert ? ['ssl.keystore.type=PEM', `ssl.keystore.certificate.chain=${propValue((await readFile(f.certFile, 'utf8')).trim())}`, `ssl.keystore.key=${propValue((await readFile(f.keyFile, 'utf8')).trim())}`] : []),
    ];
    const properties = join(dir, `${user}.properties`);
    const eoswatch = join(dir, `${user}.eoswatch.yaml`);
    await writeFile(properties, `${props.join('\n')}\n`, { mode: 0o600 });
    await writeFile(eoswatch, stringify({ kafka: c.eoswatchKafka({ user }) }), { mode: 0o600 });
    users.push({ user, properties, eoswatch });
  }
  return { ca: join(sec.pkiDir, 'ca.crt'), users };
}
