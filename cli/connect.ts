import { Client, Connection } from '@temporalio/client';

/** Where armadactl finds Temporal: the SDK's standard variables, with the dev server's defaults. */
export function temporalTarget(env = process.env) {
  return {
    address: env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    namespace: env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: env.ARMADA_TASK_QUEUE ?? 'armada',
  };
}

/** A Temporal client, or an error that says where it looked and what to do. */
export async function connect(): Promise<{ client: Client; close: () => Promise<void> }> {
  const { address, namespace } = temporalTarget();
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: '5s' });
  } catch (err) {
    throw new Error(
      `cannot reach Temporal at ${address} (${(err as Error).message}); start it with \`npm start\` or set TEMPORAL_ADDRESS`,
      { cause: err },
    );
  }
  return { client: new Client({ connection, namespace }), close: () => connection.close() };
}
