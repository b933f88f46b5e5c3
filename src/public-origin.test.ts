import { test } from 'node:test';
import assert from 'node:assert/strict';
import { publicOrigin } from './public-origin.ts';

test("an organisation's public origin: scheme, address and the port when it is not the scheme's own", () => {
  assert.equal(publicOrigin({ publicScheme: 'http', publicPort: 8080 }, 'alpha.localhost'), 'http://alpha.localhost:8080');
  assert.equal(publicOrigin({ publicScheme: 'https', publicPort: undefined }, 'school.example'), 'https://school.example');
  assert.equal(publicOrigin({ publicScheme: 'https', publicPort: 443 }, 'school.example'), 'https://school.example');
  assert.equal(publicOrigin({ publicScheme: 'http', publicPort: 80 }, 'school.example'), 'http://school.example');
  assert.equal(publicOrigin({ publicScheme: 'https', publicPort: 8443 }, 'school.example'), 'https://school.example:8443');
});
