// Exactly-once from the security side, judged on the cluster's ACLs (DescribeAcls, gathered by the
// cluster source): who may Write the transactional ids of each watched application (any of them
// can fence it: InitProducerId with its id bumps the epoch and the application's producer is
// fenced), and whether everyone may Read the transaction log or the offsets topic. Super users
// and `allow.everyone.if.no.acl.found=true` are broker settings DescribeAcls does not show: the
// findings speak of ACLs only. Pure.
import type { AclBindingFacts, AclFacts, Check, CheckResult } from '../types.js';

/** Kafka's wildcard principal: every client, authenticated or not. */
export const EVERYONE = 'User:*';
export const INTERNAL_TOPICS = ['__transaction_state', '__consumer_offsets'] as const;

/** The binding grants `operation` (directly or through All). */
export function grants(b: AclBindingFacts, operation: string): boolean {
  return b.operation === operation || b.operation === 'All';
}

/** The binding applies to the resource named `name` (a literal `*` applies to all of its type). */
export function coversName(b: AclBindingFacts, name: string): boolean {
  if (b.pattern === 'literal') return b.name === '*' || b.name === name;
  if (b.pattern === 'prefixed') return name.startsWith(b.name);
  return false;
}

/** The binding applies to some id that starts with `prefix` (an id of the application). */
export function overlapsPrefix(b: AclBindingFacts, prefix: string): boolean {
  if (b.pattern === 'literal') return b.name === '*' || b.name.startsWith(prefix);
  if (b.pattern === 'prefixed') return b.name.startsWith(prefix) || prefix.startsWith(b.name);
  return false;
}

/** The binding applies to every id that starts with `prefix`. */
export function coversPrefix(b: AclBindingFacts, prefix: string): boolean {
  if (b.pattern === 'literal') return b.name === '*';
  if (b.pattern === 'prefixed') return prefix.startsWith(b.name);
  return false;
}

/** A binding as a person reads it: `User:app (prefixed orders*)`, `User:* (literal *) from 10.0.0.1`. */
export function describeBinding(b: AclBindingFacts): string {
  const what = b.pattern === 'prefixed' ? `prefixed ${b.name}*` : `${b.pattern} ${b.name}`;
  return `${b.principal} (${what}${b.operation === 'All' ? ', All' : ''})${b.host === '*' ? '' : ` from ${b.host}`}`;
}

/** A wildcard: the principal is everyone, or the resource is every resource of its type. */
export function isWildcard(b: AclBindingFacts): boolean {
  return b.principal === EVERYONE || (b.pattern === 'literal' && b.name === '*');
}

/**
 * The allow bindings that let someone use `operation` on the resources `applies` selects, minus
 * those a deny on all of them (`deniesAll`) takes back: a deny for the same principal or for
 * everyone, from any host or the same one. Sorted by their description.
 */
export function effectiveAllows(
  bindings: AclBindingFacts[],
  resource: AclBindingFacts['resource'],
  operation: string,
  applies: (b: AclBindingFacts) => boolean,
  deniesAll: (b: AclBindingFacts) => boolean,
): AclBindingFacts[] {
  const ofKind = bindings.filter((b) => b.resource === resource && grants(b, operation));
  const denies = ofKind.filter((b) => b.permission === 'deny' && deniesAll(b));
  const deniedTo = (a: AclBindingFacts): boolean => denies.some((d) => (d.principal === a.principal || d.principal === EVERYONE) && (d.host === '*' || d.host === a.host));
  return ofKind
    .filter((b) => b.permission === 'allow' && applies(b) && !deniedTo(b))
    .sort((x, y) => describeBinding(x).localeCompare(describeBinding(y)));
}

/** Who may Write transactional ids that start with `prefix`. */
export function writersOf(bindings: AclBindingFacts[], prefix: string): AclBindingFacts[] {
  return effectiveAllows(bindings, 'transactional-id', 'Write', (b) => overlapsPrefix(b, prefix), (b) => coversPrefix(b, prefix));
}

/** Who may Read the topic `name`. */
export function readersOf(bindings: AclBindingFacts[], name: string): AclBindingFacts[] {
  return effectiveAllows(bindings, 'topic', 'Read', (b) => coversName(b, name), (b) => coversName(b, name));
}

/** The watched prefixes, each once, with every owner that uses it. */
export function prefixesOf(acls: AclFacts): { prefix: string; owners: string[] }[] {
  const by = new Map<string, string[]>();
  for (const w of acls.watchedPrefixes) by.set(w.prefix, [...(by.get(w.prefix) ?? []), w.owner]);
  return [...by].sort((a, b) => a[0].localeCompare(b[0])).map(([prefix, owners]) => ({ prefix, owners: [...new Set(owners)].sort() }));
}

/** The finding when the ACLs could not be judged at all, or undefined when they were read. */
export function unjudged(acls: AclFacts, subject: string): CheckResult | undefined {
  if (acls.state === 'read') return undefined;
  if (acls.state === 'authorizer-off') {
    return {
      target: 'acl',
      passed: true,
      observed: `no authorizer on the cluster (DescribeAcls: SECURITY_DISABLED): no ACL restricts ${subject}; every client may`,
      expected: 'ACLs judged where an authorizer is configured',
    };
  }
  if (acls.state === 'denied') {
    return {
      target: 'acl',
      passed: false,
      observed: `DescribeAcls refused (${acls.error ?? 'authorization failed'}): ${subject} cannot be told`,
      expected: 'Describe on Cluster (DescribeAcls)',
      remediation: "Grant Describe on Cluster to eoswatch's principal (kafka-acls.sh --add --allow-principal User:<eoswatch> --operation Describe --cluster), or accept that the ACLs go unjudged.",
    };
  }
  return { target: 'acl', passed: false, observed: `DescribeAcls failed (${acls.error ?? 'unknown error'}): ${subject} cannot be told`, expected: 'the ACLs read' };
}

const list = (bs: AclBindingFacts[]): string => bs.map(describeBinding).join(', ');

export const aclChecks: Check[] = [
  {
    id: 'acl.transactional-id-writers',
    title: "Only the application may write its transactional ids",
    severity: 'warning',
    rationale:
      "Any principal that may Write a transactional id can call InitProducerId with it: the coordinator bumps the id's epoch, aborts the open transaction " +
      "and fences the application's producer (ProducerFencedException), again and again if it wants to. That is a denial of service on exactly-once by any " +
      'client holding the ACL, by mistake (a copy of the application with the same prefix) or on purpose. A wildcard (User:* or transactional-id:*) hands ' +
      'that power to every client or lets one principal fence every application. The finding lists every principal an ACL lets write ids of each watched ' +
      'prefix (pipeline.transactionalIdPrefix, flink.transactionalIdPrefixes, streams application ids); only the application\u2019s own principal belongs ' +
      'there. Super users are not ACLs and are not listed. Needs Describe on Cluster (DescribeAcls).',
    remediation:
      'Grant Write on the prefix to the application\u2019s principal only (kafka-acls.sh --add --allow-principal User:<app> --operation Write --transactional-id <prefix> --resource-pattern-type prefixed) and remove the wildcard or foreign ACLs the finding names (kafka-acls.sh --remove ...).',
    evaluate: (f) => {
      const acls = f.acls;
      if (!acls) return [];
      const prefixes = prefixesOf(acls);
      if (prefixes.length === 0) return [];
      const off = unjudged(acls, 'who may write the watched transactional ids');
      if (off) return [off];
      return prefixes.map(({ prefix, owners }) => {
        const writers = writersOf(acls.bindings, prefix);
        const wild = writers.filter(isWildcard);
        const observed =
          writers.length === 0
            ? `${owners.join(', ')}: no ACL grants Write on transactional ids ${prefix}*; only super users may use them`
            : `${owners.join(', ')}: Write on transactional ids ${prefix}* granted to ${list(writers)}` +
              (wild.length ? `; wildcard: ${list(wild)} can fence the application` : '');
        return {
          target: `acl:transactional-id:${prefix}`,
          passed: wild.length === 0,
          observed,
          expected: "the application's own principal only; no User:* and no transactional-id:* ACL",
        };
      });
    },
  },
  {
    id: 'acl.internal-topics-readable',
    title: 'The transaction log and the offsets topic are not readable by everyone',
    severity: 'warning',
    rationale:
      '__transaction_state holds every transactional id with its producer id, epoch, state and partitions; __consumer_offsets every group\u2019s committed ' +
      'positions, including the offsets exactly-once pipelines commit inside their transactions. Readable by User:* (directly, through a topic:* ACL or ' +
      'a prefix that covers them), any client learns which applications run, which ids to fence and where each one stands. Only administrators and ' +
      'monitoring (eoswatch reads __transaction_state with Describe and Read of its own) need them. Needs Describe on Cluster (DescribeAcls); without it ' +
      'acl.transactional-id-writers names the gap.',
    remediation:
      'Remove the Read ACL for User:* the finding names (kafka-acls.sh --remove --allow-principal "User:*" --operation Read --topic ...) and grant Read on the internal topic to the principals that need it by name.',
    evaluate: (f) => {
      const acls = f.acls;
      if (!acls || acls.state === 'denied' || acls.state === 'error') return [];
      const off = unjudged(acls, 'who may read __transaction_state and __consumer_offsets');
      if (off) return [off];
      return INTERNAL_TOPICS.map((topic) => {
        const readers = readersOf(acls.bindings, topic);
        const everyone = readers.filter((b) => b.principal === EVERYONE);
        const named = readers.filter((b) => b.principal !== EVERYONE);
        const others = named.length ? `; by name: ${list(named)}` : '';
        return {
          target: `topic:${topic}`,
          passed: everyone.length === 0,
          observed: everyone.length ? `readable by everyone through ${list(everyone)}${others}` : `no ACL lets everyone read it${named.length ? `; readable by ${list(named)}` : ''}`,
          expected: 'no Read (or All) for User:*',
        };
      });
    },
  },
];
