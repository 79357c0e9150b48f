// helm test: GET /healthz on the Service with the scheme the pod serves; with TLS, verifies the
// server certificate against the dedicated CA for the Service's name and presents the client
// certificate. Exit 0 on HTTP 200. Run with `node -e` in the fabric-ops image.
const fs = require('node:fs');
const url = new URL(process.env.HEALTHZ_URL);
const dir = process.env.CLIENT_TLS_DIR;
const tls = url.protocol === 'https:';
const options = tls
  ? {
      ca: fs.readFileSync(`${dir}/ca.crt`),
      cert: fs.readFileSync(`${dir}/tls.crt`),
      key: fs.readFileSync(`${dir}/tls.key`),
      servername: url.hostname,
    }
  : {};
const request = require(tls ? 'node:https' : 'node:http').get(url, options, (response) => {
  let body = '';
  response.setEncoding('utf8');
  response.on('data', (chunk) => (body += chunk));
  response.on('end', () => {
    console.log(`GET ${url.href}: HTTP ${response.statusCode} ${body}`);
    process.exit(response.statusCode === 200 ? 0 : 1);
  });
});
request.setTimeout(10000, () => request.destroy(new Error('no answer within 10 s')));
request.on('error', (error) => {
  console.error(`GET ${url.href}: ${error.message}`);
  process.exit(1);
});
