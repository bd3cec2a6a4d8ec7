import {
  chartRun,
  deployerRun,
  groupRun,
  manifestRun,
  type RunMemo,
  type RunRequest,
} from '../runs/requests';
import type { SteeringSigner } from '../runs/steering-key';
import type { Carried } from '../core/control';
import type { ManifestDocuments } from '../core/plan/manifest';
import { ownerOf, specsOf, validSpec, type ObjectView } from './view';
import type { BridgeContext } from './context';

/*
 * Which run an object gets, planned from the bridge's cache: its run request (the plan, the specs
 * in its memo, the ServiceAccount it acts as, its steering key). Apart from reconcile.ts, which
 * acts on it, so the standalone and drift paths can ask it too.
 */

export type Mode = RunMemo['mode'];

/**
 * The run that drives an object on its own (its request carries the specs it deploys in its
 * memo); a chart's is also the uninstall of the release it installed on its own (standalone.ts).
 */
export function runOf(ctx: BridgeContext, view: ObjectView, mode: Mode): RunRequest {
  const { run: planned, objects } = requestOf(ctx, view, mode);
  const run = steeredBy(ctx.steering, planned, objects);
  // The object it is for, by what the API server and Temporal both keep: see ranForAnother.
  return view.uid ? { ...run, memo: { ...run.memo, uid: view.uid } } : run;
}

/** The run request with what its run checks steering by (Carried.steering): the bridge's key, its specs' authors. */
function steeredBy(
  signer: SteeringSigner | undefined,
  run: RunRequest,
  objects: readonly ObjectView[],
): RunRequest {
  if (!signer) return run;
  const authors = Object.fromEntries(
    objects.flatMap((o) => (o.author ? [[`${o.kind}/${o.name}`, o.author]] : [])),
  );
  const input = run.input as { carried?: Carried };
  const steering = { key: signer.publicKey, authors };
  return { ...run, input: { ...input, carried: { ...input.carried, steering } } };
}

/** An object's run request, and the objects whose specs it plans (`view` first). */
function requestOf(
  ctx: BridgeContext,
  view: ObjectView,
  mode: Mode,
): { run: RunRequest; objects: ObjectView[] } {
  const { namespace, name } = view;
  switch (view.kind) {
    case 'ArmadaManifest': {
      const { docs, objects } = manifestDocuments(ctx, view);
      return { run: manifestRun(docs, mode, specsOf(objects)), objects };
    }
    case 'ArmadaChartGroup': {
      const spec = validSpec(view);
      const listed = listedOf(ctx, 'ArmadaChart', namespace, spec.chart_group);
      const charts = [...listed, ...dependenciesOf(ctx, namespace, listed)];
      const deployers = listedOf(ctx, 'Deployer', namespace, spec.deployers ?? []);
      const objects = [view, ...charts, ...deployers];
      const run = groupRun(
        {
          namespace,
          name,
          spec,
          charts: specsByName(charts, actingAs(ctx)),
          ...(deployers.length && { deployers: specsByName(deployers, actingAs(ctx)) }),
        },
        mode,
        specsOf(objects),
      );
      return { run, objects };
    }
    case 'ArmadaChart': {
      const dependencies = dependenciesOf(ctx, namespace, [view]);
      const run = chartRun(
        { kind: view.kind, name, namespace, spec: actingAs(ctx)(validSpec(view)) },
        mode,
        specsOf([view, ...dependencies]),
        specsByName(dependencies),
      );
      return { run, objects: [view, ...dependencies] };
    }
    case 'Deployer': {
      const run = deployerRun(
        { kind: view.kind, name, namespace, spec: actingAs(ctx)(validSpec(view)) },
        mode,
        specsOf([view]),
      );
      return { run, objects: [view] };
    }
  }
}

/**
 * Fills in the service_account_name a spec's run acts as: its own, else its manifest's
 * (`inherited`), else the bridge's ARMADA_DEFAULT_SERVICE_ACCOUNT; none of them: the worker.
 */
function actingAs(ctx: BridgeContext, inherited?: string) {
  return <S extends { service_account_name?: string }>(spec: S): S => {
    const name = spec.service_account_name ?? inherited ?? ctx.tenancy.defaultServiceAccount;
    return name === undefined ? spec : { ...spec, service_account_name: name };
  };
}

/**
 * The cached charts that `charts` build in through `dependencies`, theirs too, each once, none of
 * `charts` itself: their specs are planned with them and their generations are in the run's memo,
 * so a change to one (helm-toolkit) runs again every chart built with it.
 */
function dependenciesOf(
  ctx: BridgeContext,
  namespace: string,
  charts: readonly ObjectView<'ArmadaChart'>[],
): ObjectView<'ArmadaChart'>[] {
  const seen = new Set(charts.map((c) => c.name));
  const found: ObjectView<'ArmadaChart'>[] = [];
  for (let next = charts; next.length;) {
    const names = next.flatMap((c) => (c.parsed.valid ? (c.parsed.spec.dependencies ?? []) : []));
    next = listedOf(
      ctx,
      'ArmadaChart',
      namespace,
      names.filter((n) => !seen.has(n)),
    );
    for (const chart of next) seen.add(chart.name);
    found.push(...next);
  }
  return found;
}

/** The cached objects of `kind` in a namespace that `names` lists (a group's charts or Deployers, a manifest's groups). */
export function listedOf<K extends 'ArmadaChartGroup' | 'ArmadaChart' | 'Deployer'>(
  ctx: BridgeContext,
  kind: K,
  namespace: string,
  names: readonly string[],
): ObjectView<K>[] {
  // Looked up by name: what a group lists, not every object of the namespace.
  const cached = ctx.objects(kind);
  return [...new Set(names)].flatMap((name) => cached.get(namespace, name) ?? []);
}

/** Parsed specs by object name, as the planners take them (`fill` completes each: actingAs). */
function specsByName<K extends 'ArmadaChartGroup' | 'ArmadaChart' | 'Deployer'>(
  views: ObjectView<K>[],
  fill: (spec: ReturnType<typeof validSpec<K>>) => ReturnType<typeof validSpec<K>> = (spec) => spec,
) {
  return Object.fromEntries(views.map((v) => [v.name, fill(validSpec<K>(v))]));
}

/** The cached groups a manifest lists (`groupNames`) and the charts and Deployers they list. */
export function manifestListed(
  ctx: BridgeContext,
  namespace: string,
  groupNames: readonly string[],
): {
  groups: ObjectView<'ArmadaChartGroup'>[];
  charts: ObjectView<'ArmadaChart'>[];
  deployers: ObjectView<'Deployer'>[];
} {
  const groups = listedOf(ctx, 'ArmadaChartGroup', namespace, groupNames);
  const charts = listedOf(
    ctx,
    'ArmadaChart',
    namespace,
    groups.flatMap((g) => g.lists),
  );
  const deployers = listedOf(
    ctx,
    'Deployer',
    namespace,
    groups.flatMap((g) => g.deployers),
  );
  return { groups, charts, deployers };
}

/** A manifest with the groups and charts it lists, from the cache, specs parsed. */
function manifestDocuments(
  ctx: BridgeContext,
  view: ObjectView<'ArmadaManifest'>,
): { docs: ManifestDocuments; objects: ObjectView[] } {
  const { namespace } = view;
  const manifestSpec = validSpec(view);
  const { groups, charts: listed, deployers } = manifestListed(ctx, namespace, manifestSpec.chart_groups);
  const charts = [...listed, ...dependenciesOf(ctx, namespace, listed)];
  const inherited = actingAs(ctx, manifestSpec.service_account_name);
  const docs: ManifestDocuments = {
    namespace,
    manifest: { name: view.name, spec: manifestSpec },
    groups: specsByName(groups),
    charts: specsByName(charts, inherited),
    ...(deployers.length && { deployers: specsByName(deployers, inherited) }),
  };
  return { docs, objects: [view, ...groups, ...charts, ...deployers] };
}

/** The service_account_name of the manifest that lists a chart or Deployer (through its group), if any. */
export function manifestServiceAccount(
  ctx: BridgeContext,
  listed: ObjectView<'ArmadaChart' | 'Deployer'>,
): string | undefined {
  const group = ownerOf(ctx, listed);
  const manifest = group && ownerOf(ctx, group);
  return manifest?.kind === 'ArmadaManifest' && manifest.parsed.valid
    ? manifest.parsed.spec.service_account_name
    : undefined;
}

/** The ServiceAccount a valid chart's runs act as (see actingAs); undefined: the worker itself. */
export function chartServiceAccount(
  ctx: BridgeContext,
  chart: ObjectView<'ArmadaChart'>,
): string | undefined {
  if (!chart.parsed.valid) return undefined;
  return actingAs(ctx, manifestServiceAccount(ctx, chart))(chart.parsed.spec).service_account_name;
}
