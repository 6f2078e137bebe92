import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export interface LocalS3 {
  /** The server environment that points Plinth at it (`STORAGE_BACKEND=s3`, `S3_*`). */
  env: Record<string, string>;
  endpoint: string;
  bucket: string;
  /** Its files on disk (one directory per bucket). */
  directory: string;
  stop(): Promise<void>;
}

/**
 * A real S3 API server (the npm package s3rver) on a free loopback port, with one empty bucket.
 * @example const s3 = await startS3(); const t = await createTestServer(s3.env); … await s3.stop();
 */
export async function startS3(bucket = 'plinth-test'): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'plinth-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    env: {
      STORAGE_BACKEND: 's3',
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    endpoint,
    bucket,
    directory,
    async stop() {
      // Its close waits for keep-alive connections (the SDK keeps them): end them first.
      const http = (server as unknown as { httpServer?: import('node:http').Server }).httpServer;
      http?.closeAllConnections();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
