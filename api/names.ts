import { z } from 'zod';
import { objectName } from './common';

/**
 * A list of object names in order, each once: `chart_group` of a group, `chart_groups` of a manifest.
 * `what` names one entry in messages ("chart", "chart group").
 */
export const orderedNames = (what: string) =>
  z
    .array(objectName(`a ${what} name`))
    .min(1, `must list at least one ${what}`)
    .max(500)
    .superRefine((names, ctx) => {
      names.forEach((name, i) => {
        const first = names.indexOf(name);
        if (first !== i) {
          ctx.addIssue({
            code: 'custom',
            path: [i],
            message: `${what} "${name}" is listed twice (also at index ${first})`,
          });
        }
      });
    });
