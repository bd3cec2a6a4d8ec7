import type { ChartDependency } from '../contracts/charts';
import type { ArmadaChartSpec } from '../../api/chart';

type DependencySpec = Pick<ArmadaChartSpec, 'source' | 'dependencies'>;

/**
 * A chart's `dependencies` resolved among the charts of its namespace, as Armada resolves a Chart
 * document's (armada/handlers/manifest.py, build_chart_deps): each name to that chart's source and,
 * recursively, its own dependencies. `dependencies` is absent when the chart lists none (the field
 * absent, not an empty list, which replaces the chart's own subcharts). A name that is not there,
 * and a chart that depends on itself through others, are problems.
 */
export function resolveDependencies(
  chart: string,
  charts: Readonly<Record<string, DependencySpec>>,
): { dependencies?: ChartDependency[]; problems: string[] } {
  const problems: string[] = [];
  const resolve = (names: readonly string[], path: readonly string[]): ChartDependency[] =>
    names.flatMap((name): ChartDependency[] => {
      const spec = Object.hasOwn(charts, name) ? charts[name] : undefined;
      if (!spec) {
        problems.push(`chart "${path.at(-1)}" depends on chart "${name}", which does not exist`);
        return [];
      }
      if (path.includes(name)) {
        problems.push(`chart "${chart}" depends on itself: ${[...path, name].join(' → ')}`);
        return [];
      }
      return [
        {
          chart: name,
          source: spec.source,
          ...(spec.dependencies && { dependencies: resolve(spec.dependencies, [...path, name]) }),
        },
      ];
    });
  const own = charts[chart]?.dependencies;
  const dependencies = own && resolve(own, [chart]);
  return { ...(dependencies && { dependencies }), problems };
}
