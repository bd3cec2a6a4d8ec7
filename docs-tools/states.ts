import { STATES, type StateWord } from '../api/states';
import { readingOf, statusFor } from '../core/plan/status';
import { table } from './table';

/**
 * The state words of docs/reference/observability.md: each word as a reason and PHASE, as
 * `actual_state`, its kstatus reading and SATISFIED, from the code that writes them.
 */
export function stateWordsTable(): string {
  const rows = (Object.keys(STATES) as StateWord[]).map((word) => {
    const { actual_state, satisfied } = statusFor(word, '');
    return [word, actual_state, readingOf(word), String(satisfied), STATES[word].means];
  });
  return table(
    ['word (reason, PHASE)', 'actual_state / STATE', 'reads (kstatus)', 'SATISFIED', 'means'],
    rows,
  ).join('\n');
}
