import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { toolPath } from '../activities/tools';

/** What the figures were measured on: they mean little without it. */
export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  kernel: string;
  os: string;
  arch: string;
  /** 1, 5 and 15 minute load averages when the run began: a busy machine shows in the figures. */
  loadAverage: number[];
  tools: Record<string, string>;
}

/** The first line a tool prints for its version, or why it could not say. */
async function toolVersion(tool: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(toolPath(tool), args);
    return stdout.trim().split('\n')[0];
  } catch (err) {
    return `unknown (${(err as Error).message.split('\n')[0]})`;
  }
}

/** This machine: CPUs, memory, Node.js, kernel, load, and the versions of temporal and helm. */
export async function describeMachine(): Promise<Machine> {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: os.release(),
    os: `${os.type()} ${os.version()}`,
    arch: os.arch(),
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
    tools: {
      temporal: await toolVersion('temporal', ['--version']),
      helm: await toolVersion('helm', ['version', '--template', '{{.Version}}']),
    },
  };
}
