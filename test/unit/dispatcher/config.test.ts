// Dispatcher settings: defaults, environment, flags over environment, and one clear sentence for a bad value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../../src/dispatcher/config.ts';

describe('loadConfig', () => {
  it('takes defaults, then the environment, then flags', () => {
    assert.equal(loadConfig({}, {}).namespace, 'ferry-system');
    assert.equal(loadConfig({}, {}).maxTransfersPerNode, 0);
    const env = { FERRY_MAX_TRANSFERS_PER_NODE: '3', FERRY_NAMESPACE: 'backup' };
    assert.deepEqual([loadConfig({}, env).maxTransfersPerNode, loadConfig({}, env).namespace], [3, 'backup']);
    assert.equal(loadConfig({ 'max-transfers-per-node': '5' }, env).maxTransfersPerNode, 5);
  });

  it('names the setting and what it allows when a value is wrong', () => {
    assert.throws(() => loadConfig({}, { FERRY_WEBHOOK_PORT: '70000' }), {
      message: 'FERRY_WEBHOOK_PORT must be a port number (1-65535), not "70000".',
    });
    assert.throws(() => loadConfig({ 'max-attempts': '-1' }, {}), {
      message: '--max-attempts must be a whole number, 0 or more, not "-1".',
    });
    assert.throws(() => loadConfig({}, { FERRY_WEBHOOK_PATH: 'validate' }), {
      message: 'FERRY_WEBHOOK_PATH must start with "/", not "validate".',
    });
    assert.throws(() => loadConfig({}, { FERRY_CLIENT_NAMES: 'kube-apiserver' }), {
      message:
        'FERRY_CLIENT_NAMES needs FERRY_CLIENT_CA: names are checked on client certificates, which only a client CA asks for.',
    });
  });

  it('asks callers for no client certificate unless a client CA is set', () => {
    assert.deepEqual([loadConfig({}, {}).clientCA, loadConfig({}, {}).clientNames], ['', []]);
    const env = {
      FERRY_CLIENT_CA: '/etc/ferry/client-ca/ca.crt',
      FERRY_CLIENT_NAMES: 'kube-apiserver-webhook-client, other',
    };
    assert.deepEqual(
      [loadConfig({}, env).clientCA, loadConfig({}, env).clientNames],
      ['/etc/ferry/client-ca/ca.crt', ['kube-apiserver-webhook-client', 'other']],
    );
  });
});
