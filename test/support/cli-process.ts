// The `gatehouse` command run as a user runs it: a child process, told apart
// from the tests by its output only.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = ['--import', 'tsx', path.join(root, 'src', 'cli.ts')];

export interface ServingProcess {
  readonly url: string;
  readonly pid: number;
  output(): string;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
  /** As a log shipper that dies does: the child's next write to stdout fails with EPIPE. */
  closeStdout(): void;
  kill(): void;
}

/**
 * The child's output once it shows `expected`, else as it is after 5 s. What it logs travels through
 * its stdout pipe, apart from the answers it sends: a line may arrive just after the answer it is about.
 */
export async function outputShowing(server: { output: () => string }, expected: RegExp | string): Promise<string> {
  const shows = () =>
    typeof expected === 'string' ? server.output().includes(expected) : expected.test(server.output());
  for (let waited = 0; !shows() && waited < 5_000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return server.output();
}

/** Starts `gatehouse serve` (or another command) and resolves once it prints its URL. */
export function serve(env: NodeJS.ProcessEnv, args: string[] = ['serve', '--port', '0']): Promise<ServingProcess> {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: root, env: { ...process.env, ...env } });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const match = /(?:gatehouse listening on|gatehouse dev: open) (http:\/\/[^\s/]+)/.exec(output);
      if (match) {
        resolve({
          url: match[1]!,
          pid: child.pid!,
          output: () => output,
          stop: () =>
            new Promise((done) => {
              child.once('exit', (code) => done(code));
              child.kill('SIGTERM');
            }),
          closeStdout: () => child.stdout.destroy(),
          kill: () => child.kill('SIGKILL'),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${output}`)));
  });
}
