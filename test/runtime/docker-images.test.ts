import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultImages, dockerImages } from '../../src/runtime/docker-images.js';

test('docker images: defaults, each overridable by its LIMBO_*_IMAGE variable', () => {
  assert.deepEqual(dockerImages({}), defaultImages);
  assert.equal(defaultImages.toxiproxy, 'ghcr.io/shopify/toxiproxy:2.12.0');
  const images = dockerImages({ LIMBO_SERVICES_IMAGE: 'reg.example/limbo:1', LIMBO_TOXIPROXY_IMAGE: '  ' });
  assert.equal(images.services, 'reg.example/limbo:1');
  assert.equal(images.toxiproxy, defaultImages.toxiproxy, 'a blank value keeps the default');
});
