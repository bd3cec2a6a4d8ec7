import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Sizes } from './config';
import type { BenchContext } from './context';
import { runOverhead } from './overhead';
import { repo } from './processes';

/** A V8 CPU profile as `node --cpu-prof` writes it. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  function: string;
  ms: number;
  percent: number;
}

/**
 * Self time per function of a CPU profile (each sample's interval charged to the function it
 * landed in), largest first; `(idle)` and `(program)` included, so the share the worker spent
 * waiting shows.
 */
export function selfTimes(profile: CpuProfile, top = 12): { totalMs: number; functions: SelfTime[] } {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const micros = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byNode.get(id);
    if (!frame) return;
    const where = frame.url ? `${path.basename(frame.url)}:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    micros.set(name, (micros.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = profile.endTime - profile.startTime;
  const functions = [...micros.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, us]) => ({
      function: name,
      ms: Math.round(us / 100) / 10,
      percent: Math.round((us / total) * 1000) / 10,
    }));
  return { totalMs: Math.round(total / 1000), functions };
}

/**
 * Benchmark 5, profile and improve: benchmark 1 again with the worker under `--cpu-prof`, its
 * hottest functions, and beside them the group transition before and after the fix that
 * landed for it (bench/results/before-after.json, measured when it landed: the old workflow
 * code path cannot be run again side by side, it is behind patched()).
 */
export async function runProfile(ctx: BenchContext, sizes: Sizes): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armada-bench-profile-'));
  const overhead = await runOverhead(
    ctx,
    { ...sizes.overhead, runs: Math.min(sizes.overhead.runs, 2) },
    { BENCH_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${dir}` },
  );
  const file = (await readdir(dir)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`the worker wrote no CPU profile into ${dir}`);
  const profile = selfTimes(JSON.parse(await readFile(path.join(dir, file), 'utf8')) as CpuProfile);
  const recorded = JSON.parse(await readFile(path.join(repo, 'bench/results/before-after.json'), 'utf8')) as {
    what: string;
    cause: string;
    before: { groupTransitionMs: { p50: number } };
    after: { groupTransitionMs: { p50: number } };
  };
  const now = (overhead.groupTransitionMs as { p50: number } | undefined)?.p50;
  ctx.log(
    `  worker CPU: ${profile.functions
      .slice(0, 5)
      .map((f) => `${f.function} ${f.percent} %`)
      .join(', ')}`,
  );
  return {
    what: 'benchmark 1 with the worker under --cpu-prof; the fix for the slowest figure, before and after',
    workerProfile: profile,
    groupTransitionP50Ms: {
      beforeFix: recorded.before.groupTransitionMs.p50,
      afterFix: recorded.after.groupTransitionMs.p50,
      thisRunProfiled: now,
    },
    fix: recorded.what,
    cause: recorded.cause,
  };
}
