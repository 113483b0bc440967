// ACLs for the secured local cluster (`npm run kafka -- acl grant|revoke|list`) and the table of
// the ACLs each eoswatch service and command needs: one list that the secured integration test
// grants (test/integration/secure.test.ts) and docs/security.md prints (aclTableMarkdown), so the
// documentation cannot drift from what is proven. Parsing and the table are pure; grant, revoke and
// list go through the admin API as the cluster's super user.
import kafkajs, { type Admin, type AclEntry } from 'kafkajs';
import { EosError, ErrorCodes } from '../../src/errors.js';
import { EOSWATCH_ACLS, neededPermissions, type AclNames } from '../../src/kafka/needed-acls.js';
import { permissionText, resourceText } from '../../src/kafka/permissions.js';

export { EOSWATCH_ACLS, type AclNames, type NeededAcl, type ServiceAcls } from '../../src/kafka/needed-acls.js';

// kafkajs is CommonJS: its enums are read from the default export.
const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;
type AclOperationTypes = kafkajs.AclOperationTypes;
type AclResourceTypes = kafkajs.AclResourceTypes;

export type ResourceKind = 'topic' | 'group' | 'transactional-id' | 'cluster';

export const OPERATIONS = ['All', 'Read', 'Write', 'Create', 'Delete', 'Alter', 'Describe', 'ClusterAction', 'DescribeConfigs', 'AlterConfigs', 'IdempotentWrite'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface AclSpec {
  principal: string;
  resource: ResourceKind;
  /** The literal name or, with prefixed, the prefix; 'kafka-cluster' for the cluster. */
  name: string;
  prefixed: boolean;
  operation: Operation;
}

const RESOURCE_TYPES: Record<ResourceKind, AclResourceTypes> = {
  topic: AclResourceTypes.TOPIC,
  group: AclResourceTypes.GROUP,
  'transactional-id': AclResourceTypes.TRANSACTIONAL_ID,
  cluster: AclResourceTypes.CLUSTER,
};

const OPERATION_TYPES: Record<Operation, AclOperationTypes> = {
  All: AclOperationTypes.ALL,
  Read: AclOperationTypes.READ,
  Write: AclOperationTypes.WRITE,
  Create: AclOperationTypes.CREATE,
  Delete: AclOperationTypes.DELETE,
  Alter: AclOperationTypes.ALTER,
  Describe: AclOperationTypes.DESCRIBE,
  ClusterAction: AclOperationTypes.CLUSTER_ACTION,
  DescribeConfigs: AclOperationTypes.DESCRIBE_CONFIGS,
  AlterConfigs: AclOperationTypes.ALTER_CONFIGS,
  IdempotentWrite: AclOperationTypes.IDEMPOTENT_WRITE,
};

/** `topic:name`, `group:name`, `transactional-id:prefix*`, `cluster`: a trailing * means prefixed. Pure. */
export function parseResource(text: string): Pick<AclSpec, 'resource' | 'name' | 'prefixed'> {
  if (text === 'cluster') return { resource: 'cluster', name: 'kafka-cluster', prefixed: false };
  const i = text.indexOf(':');
  const kind = text.slice(0, i) as ResourceKind;
  const raw = text.slice(i + 1);
  if (i <= 0 || !(kind in RESOURCE_TYPES) || kind === 'cluster' || raw === '' || raw === '*') {
    throw new EosError(ErrorCodes.USAGE, `--resource: expected topic:NAME, group:NAME, transactional-id:NAME (a trailing * for a prefix) or cluster, found "${text}"`);
  }
  const prefixed = raw.endsWith('*');
  return { resource: kind, name: prefixed ? raw.slice(0, -1) : raw, prefixed };
}

export function parseOperation(text: string): Operation {
  const op = OPERATIONS.find((o) => o.toLowerCase() === text.toLowerCase().replace(/[-_]/g, ''));
  if (!op) throw new EosError(ErrorCodes.USAGE, `--operation: expected one of ${OPERATIONS.join(', ')}, found "${text}"`);
  return op;
}

export function parsePrincipal(text: string): string {
  if (!/^User:[^\s;]+$/.test(text)) throw new EosError(ErrorCodes.USAGE, `--principal: expected User:NAME, found "${text}"`);
  return text;
}

/** The spec as a kafkajs ACL entry (allow, any host). Pure. */
export function aclEntry(a: AclSpec): AclEntry {
  return {
    resourceType: RESOURCE_TYPES[a.resource],
    resourceName: a.name,
    resourcePatternType: a.prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal: a.principal,
    host: '*',
    operation: OPERATION_TYPES[a.operation],
    permissionType: AclPermissionTypes.ALLOW,
  };
}

export function describeAcl(a: AclSpec): string {
  return `${a.principal} ${permissionText(a)}`;
}

export async function grantAcls(admin: Admin, acls: AclSpec[]): Promise<void> {
  if (acls.length) await admin.createAcls({ acl: acls.map(aclEntry) });
}

export async function revokeAcls(admin: Admin, acls: AclSpec[]): Promise<number> {
  if (!acls.length) return 0;
  const res = await admin.deleteAcls({ filters: acls.map(aclEntry) });
  return res.filterResponses.reduce((n, r) => n + r.matchingAcls.length, 0);
}

const byType = <T extends string>(m: Record<T, number>, v: number): T | undefined => (Object.keys(m) as T[]).find((k) => m[k] === v);

/** Every ACL of the cluster (or of one principal), as specs. */
export async function listAcls(admin: Admin, principal?: string): Promise<AclSpec[]> {
  const res = await admin.describeAcls({
    resourceType: AclResourceTypes.ANY,
    resourcePatternType: ResourcePatternTypes.ANY,
    operation: AclOperationTypes.ANY,
    permissionType: AclPermissionTypes.ANY,
    ...(principal ? { principal } : {}),
  });
  const out: AclSpec[] = [];
  for (const r of res.resources) {
    const resource = byType(RESOURCE_TYPES, r.resourceType);
    if (!resource) continue;
    for (const a of r.acls) {
      const operation = byType(OPERATION_TYPES, a.operation);
      if (!operation) continue;
      out.push({ principal: a.principal, resource, name: r.resourceName, prefixed: r.resourcePatternType === ResourcePatternTypes.PREFIXED, operation });
    }
  }
  return out.sort((a, b) => describeAcl(a).localeCompare(describeAcl(b)));
}

/** The needed ACLs of the given services for one principal and the config's names, without duplicates. Pure. */
export function aclsFor(principal: string, names: AclNames, services?: string[]): AclSpec[] {
  return neededPermissions(names, services).map((p) => ({ principal, ...p }));
}

/** The table of docs/security.md, between its generated-table markers. Pure. */
export function aclTableMarkdown(): string {
  const rows = ['| Service | Resource | Operation | Needed by (Kafka APIs) |', '|---|---|---|---|'];
  for (const s of EOSWATCH_ACLS) {
    if (!s.acls.length) rows.push(`| ${s.service} | (none) | (none) | Metadata, ApiVersions: no ACL |`);
    for (const a of s.acls) rows.push(`| ${s.service} | \`${resourceText(a)}\` | ${a.operation} | ${a.apis} |`);
  }
  return `${rows.join('\n')}\n`;
}
