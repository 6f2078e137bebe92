import S3rver from 's3rver';
import { S3Client, PutObjectCommand, GetObjectCommand, CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand, CopyObjectCommand, ListObjectsV2Command, DeleteObjectCommand, HeadBucketCommand, ListMultipartUploadsCommand, AbortMultipartUploadCommand } from '@aws-sdk/client-s3';
const s = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: '/tmp/s3try/data', configureBuckets: [{ name: 'plinth' }] });
const info = await s.run();
console.log(info);
const c = new S3Client({ endpoint: `http://127.0.0.1:${info.port}`, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
await c.send(new HeadBucketCommand({ Bucket: 'plinth' }));
const put = await c.send(new PutObjectCommand({ Bucket: 'plinth', Key: 'a/b', Body: Buffer.from('hello world'), ContentLength: 11 }));
console.log('put', put.ETag);
const g = await c.send(new GetObjectCommand({ Bucket: 'plinth', Key: 'a/b', Range: 'bytes=2-5' }));
console.log('range', g.ContentRange, g.ContentLength, Buffer.from(await g.Body.transformToByteArray()).toString());
const mp = await c.send(new CreateMultipartUploadCommand({ Bucket: 'plinth', Key: 'big' }));
const part = Buffer.alloc(5*1024*1024, 1);
const p1 = await c.send(new UploadPartCommand({ Bucket: 'plinth', Key: 'big', UploadId: mp.UploadId, PartNumber: 1, Body: part, ContentLength: part.length }));
const p2 = await c.send(new UploadPartCommand({ Bucket: 'plinth', Key: 'big', UploadId: mp.UploadId, PartNumber: 2, Body: Buffer.from('tail'), ContentLength: 4 }));
try { const l = await c.send(new ListMultipartUploadsCommand({ Bucket: 'plinth' })); console.log('listmp', l.Uploads?.length); } catch (e) { console.log('listmp err', e.name, e.message); }
const done = await c.send(new CompleteMultipartUploadCommand({ Bucket: 'plinth', Key: 'big', UploadId: mp.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.ETag }, { PartNumber: 2, ETag: p2.ETag }] } }));
console.log('mp', done.ETag);
const gb = await c.send(new GetObjectCommand({ Bucket: 'plinth', Key: 'big' }));
console.log('big', gb.ContentLength);
await c.send(new CopyObjectCommand({ Bucket: 'plinth', Key: 'c', CopySource: 'plinth/a/b' }));
const l = await c.send(new ListObjectsV2Command({ Bucket: 'plinth', Prefix: '' }));
console.log(l.Contents.map(o => [o.Key, o.LastModified]));
await c.send(new DeleteObjectCommand({ Bucket: 'plinth', Key: 'c' }));
try { await c.send(new GetObjectCommand({ Bucket: 'plinth', Key: 'c' })); } catch (e) { console.log('get missing', e.name, e.$metadata?.httpStatusCode); }
const mp2 = await c.send(new CreateMultipartUploadCommand({ Bucket: 'plinth', Key: 'ab' }));
try { await c.send(new AbortMultipartUploadCommand({ Bucket: 'plinth', Key: 'ab', UploadId: mp2.UploadId })); console.log('abort ok'); } catch (e) { console.log('abort err', e.name); }
await s.close();
