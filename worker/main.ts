import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from './config';
import { nativeConnectionOptions } from './temporal-connection';
import { createWorker } from './worker';

/** The worker process: runs until SIGINT/SIGTERM, then finishes in-flight tasks and exits. */
async function main(): Promise<void> {
  const config = loadConfig();
  const { address, namespace } = config.temporal;
  const connection = await NativeConnection.connect(nativeConnectionOptions(config.temporal)).catch(
    (err: unknown) => {
      throw new Error(
        `cannot reach Temporal at ${address} (${(err as Error).message}); start it with \`npm start\` or set TEMPORAL_ADDRESS`,
        { cause: err },
      );
    },
  );
  try {
    const worker = await createWorker({ connection, namespace, taskQueue: config.ARMADA_TASK_QUEUE });
    console.log(`worker: polling task queue ${config.ARMADA_TASK_QUEUE} on ${address}/${namespace}`);
    await worker.run();
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(`worker: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
