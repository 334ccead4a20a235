// s3peer.js PORT DIR BUCKET - an S3 protocol server on 127.0.0.1 that
// verifies SigV4 (@20minutes/s3rver 5.x, through its library API).
// Prints "ready" when listening; stops on SIGTERM.
const S3rver = require('@20minutes/s3rver');
const [port, dir, bucket] = process.argv.slice(2);
const server = new S3rver({
  port: Number(port),
  address: '127.0.0.1',
  directory: dir,
  silent: true,
  configureBuckets: [{ name: bucket }],
});
server.run().then(() => {
  process.stdout.write('ready\n');
});
const stop = () => server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
