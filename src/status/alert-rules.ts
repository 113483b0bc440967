// The alert rules of alerts/eoswatch.rules.yml that the status summary mirrors, with each rule's
// `for:` (ms; 0: the rule has none). alerts/ is not shipped in the package, so the table lives
// here; test/unit/status/summary.test.ts reads the rules file and fails when a `for:` differs or a
// mirrored rule is missing from it.
export const MIRRORED_RULES = {
  EosTransactionCommitLatencyHigh: { forMs: 5 * 60_000 },
  EosCheckpointsPendingHigh: { forMs: 5 * 60_000 },
  EosCheckpointFailing: { forMs: 0 },
  EosCheckpointStalled: { forMs: 60_000 },
  EosPipelineDown: { forMs: 60_000 },
  EosDuplicatesDetected: { forMs: 0 },
  EosDataLossDetected: { forMs: 0 },
  EosConfigAuditCritical: { forMs: 0 },
  EosHangingTransaction: { forMs: 0 },
  EosCoordinatorHangingTransaction: { forMs: 2 * 60_000 },
  EosProducerFenced: { forMs: 0 },
  EosKafkaUnreachable: { forMs: 2 * 60_000 },
} as const satisfies Record<string, { forMs: number }>;

export type MirroredAlert = keyof typeof MIRRORED_RULES;
