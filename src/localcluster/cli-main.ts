// The entry of the local-cluster CLIs (npm run kafka, npm run flink): run, exit with the command's
// code, or print the error under the CLI's name and exit 1.
export function runCliMain(name: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: Error) => {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(1);
    },
  );
}
