/** Every workflow the worker registers (the worker bundles this file). */
export { chartWorkflow } from './chart';
