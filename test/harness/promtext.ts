// The strict Prometheus text reader lives in src (eoswatch status reads /metrics with it too).
export * from '../../src/metrics/text-format.js';
