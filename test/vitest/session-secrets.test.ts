/** What the host hands its workers (contract/session.ts): plain JSON with no secret of the config in it. */
import { expect, test } from 'vitest';
import { parseConfig } from '../../src/config/load.ts';
import { openHost } from '../../src/vitest/host.ts';

test('the session given to workers carries the config redacted, and the host keeps its own unredacted', async () => {
  const secret = 'sk-session-secret-0123456789';
  const config = parseConfig({
    model: { backend: 'simulated', azure_openai_api_key: secret, target_azure_openai_api_key: secret },
  });
  const host = await openHost({ config, outDir: null, quiet: true, modelServer: 'on-demand' });
  try {
    const sent = JSON.stringify(host.session);
    expect(sent).not.toContain(secret);
    expect(host.session.config.model.azure_openai_api_key).toBe('sk-s...6789');
    expect(host.session.config.model.target_azure_openai_api_key).toBe('sk-s...6789');
    expect(host.session.config.env).toEqual(config.env);
    expect(config.model.azure_openai_api_key).toBe(secret);
  } finally {
    await host.close();
  }
});
