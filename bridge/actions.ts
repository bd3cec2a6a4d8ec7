import { CONTROL_COMMANDS } from '../runs/control';

/** The actions of finished runs (runs/day-two.ts): undo one, retry a failed one. */
const DAY_TWO_ACTIONS = ['undo', 'retry'] as const;
/** Every action an object's annotation may ask of its run: control commands and day-two actions. */
export const ACTIONS: readonly string[] = [...CONTROL_COMMANDS, ...DAY_TWO_ACTIONS];
