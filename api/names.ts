import { z } from 'zod';
import { objectName } from './common';

/**
 * A list of object names in order, each once: `chart_group` of a group, `chart_groups` of a manifest.
 * `what` names one entry in messages ("chart", "chart group"); `min`: how few it may list
 * (0 for a chart's `dependencies`, where an empty list means something).
 */
export const orderedNames = (what: string, min = 1) =>
  z
    .array(objectName(`a ${what} name`))
    .min(min, `must list at least one ${what}`)
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
