import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, loadConfig } from './config.ts';

describe('configuration', () => {
  test('defaults', () => {
    const c = loadConfig({});
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.dataDir, path.resolve('./data'));
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.rateLimitPerMinute, 1200);
    assert.equal(c.concurrencyLimit, 25);
    assert.equal(c.errorsUrl, 'http://localhost:8080/docs/errors');
    assert.equal(c.publicPort, 8080);
  });

  test('PUBLIC_PORT defaults to PORT with http and to none with https', () => {
    assert.equal(loadConfig({ PORT: '9000' }).publicPort, 9000);
    assert.equal(loadConfig({ PUBLIC_SCHEME: 'https' }).publicPort, undefined);
    assert.equal(loadConfig({ PUBLIC_SCHEME: 'https' }).errorsUrl, 'https://localhost/docs/errors');
    assert.equal(loadConfig({ PUBLIC_SCHEME: 'https', PUBLIC_PORT: '8443' }).publicPort, 8443);
    assert.throws(() => loadConfig({ PUBLIC_PORT: '0' }), /PUBLIC_PORT/);
  });

  test('a bad value stops start-up with a message naming the variable', () => {
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['PORT', '70000'],
      ['DATABASE_URL', 'mysql://x'],
      ['LOG_LEVEL', 'loud'],
      ['TRUST_PROXY', 'maybe'],
      ['TRUST_PROXY', '127.1'],
      ['TRUST_PROXY', '10.0.0.0/33'],
      ['TRUST_PROXY', '127.0.0.1,'],
      ['RATE_LIMIT_PER_MINUTE', '0'],
    ]) {
      assert.throws(() => loadConfig({ [name]: value }), (err: Error) => err instanceof ConfigError && err.message.includes(name), `${name}=${value}`);
    }
  });

  test('values are parsed to their types', () => {
    const c = loadConfig({ PORT: '9000', TRUST_PROXY: 'true', DATABASE_URL: 'postgres://u@h/db', ERRORS_URL: 'https://docs.example/errors/' });
    assert.equal(c.port, 9000);
    assert.equal(c.trustProxy, true);
    assert.equal(c.databaseUrl, 'postgres://u@h/db');
    assert.equal(c.errorsUrl, 'https://docs.example/errors');
  });

  test('TRUST_PROXY: off by default, on for every peer, or for the proxies named by address or range', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '0' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, true);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback' }).trustProxy, ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', 'loopback']);
  });
});

describe('configuration of mail and process roles', () => {
  test('defaults: mail from no-reply@localhost every 5 s, both roles', () => {
    const c = loadConfig({});
    assert.equal(c.smtpUrl, undefined);
    assert.equal(c.mailFrom, 'Atrium <no-reply@localhost>');
    assert.equal(c.mailPollIntervalMs, 5000);
    assert.deepEqual([...c.roles].sort(), ['api', 'worker']);
  });

  test('values are parsed; bad ones name the variable', () => {
    const c = loadConfig({ SMTP_URL: 'smtps://u:p@mail.example:465', MAIL_FROM: 'School <news@school.example>', MAIL_POLL_INTERVAL_MS: '250', ATRIUM_ROLES: 'worker' });
    assert.deepEqual([c.smtpUrl, c.mailFrom, c.mailPollIntervalMs, [...c.roles]], ['smtps://u:p@mail.example:465', 'School <news@school.example>', 250, ['worker']]);
    for (const [name, value] of [
      ['ATRIUM_ROLES', 'api,cron'],
      ['ATRIUM_ROLES', ','],
      ['MAIL_FROM', 'no address'],
      ['MAIL_FROM', 'a@b\r\nBcc: x@y'],
      ['MAIL_POLL_INTERVAL_MS', '10'],
      ['SMTP_URL', 'http://mail.example'],
    ]) {
      assert.throws(() => loadConfig({ [name]: value }), (err: Error) => err instanceof ConfigError && err.message.includes(name), `${name}=${value}`);
    }
  });
});

describe('configuration of metrics', () => {
  test('off by default; METRICS_PORT turns them on, bound to HOST unless METRICS_HOST says otherwise', () => {
    assert.equal(loadConfig({}).metricsPort, undefined);
    const c = loadConfig({ HOST: '0.0.0.0', METRICS_PORT: '9464' });
    assert.deepEqual([c.metricsPort, c.metricsHost], [9464, '0.0.0.0']);
    assert.equal(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).metricsHost, '10.0.0.5');
    for (const value of ['70000', 'nine', '-1']) {
      assert.throws(() => loadConfig({ METRICS_PORT: value }), (err: Error) => err instanceof ConfigError && err.message.includes('METRICS_PORT'), value);
    }
  });
});
