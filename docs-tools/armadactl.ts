import { ALIASES, commands, USAGE } from '../cli/main';
import { HELP_OPTION, optionSyntax } from '../cli/command';
import { generatedNotice } from './regions';
import { table } from './table';

/**
 * docs/reference/armadactl.md: every command of armadactl, from the same definitions its
 * `--help` prints (cli/main.ts and the modules it gathers): the usage, each argument and each
 * option with its default.
 */
export function armadactlReference(): string {
  const aliases = Object.entries(ALIASES);
  const sections = Object.entries(commands).map(([name, command]) => {
    const formerNames = aliases.filter(([, of]) => of === name).map(([alias]) => `\`${alias}\``);
    const options = Object.entries({ ...command.options, ...HELP_OPTION }).map(([option, o]) => [
      `\`${optionSyntax(option, o)}\``,
      o.default === undefined ? '' : `\`${o.default}\``,
      `${o.description}${o.multiple ? '; may be repeated' : ''}`,
    ]);
    const args = Object.entries(command.arguments ?? {}).map(([arg, meaning]) => [`\`${arg}\``, meaning]);
    return [
      `## armadactl ${name}`,
      ...(formerNames.length ? [`Former name: ${formerNames.join(', ')} (still taken).`] : []),
      ['```text', command.usage, '```'].join('\n'),
      ...(args.length ? [table(['argument', 'meaning'], args).join('\n')] : []),
      table(['option', 'default', 'meaning'], options).join('\n'),
    ].join('\n\n');
  });
  return [
    generatedNotice('the command definitions in cli/'),
    '# armadactl reference',
    'Every command of `armadactl`, as `armadactl COMMAND --help` prints it.',
    ['```text', USAGE, '```'].join('\n'),
    Object.keys(commands)
      .map((name) => `- [${name}](#armadactl-${name})`)
      .join('\n'),
    ...sections,
  ]
    .join('\n\n')
    .concat('\n');
}
