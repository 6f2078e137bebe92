import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseDotenv } from './index.js';

describe('config', () => {
  it('parses .env lines with comments, quotes and export', () => {
    expect(parseDotenv('# c\nA=1\nexport B="two words"\nC=\'x=y\'\n\nbad line\n')).toEqual({ A: '1', B: 'two words', C: 'x=y' });
  });

  it('the environment wins over .env, which fills gaps', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plinth-cfg-'));
    try {
      writeFileSync(join(dir, '.env'), 'PORT=9999\nMAX_ROWS=50\nLOG_LEVEL=debug\n');
      const c = loadConfig({ PORT: '7000' }, {}, dir);
      expect(c.port).toBe(7000);
      expect(c.maxRows).toBe(50);
      expect(c.logLevel).toBe('debug');
      expect(c.publicUrl).toBe('http://localhost:7000');
      expect(c.dataDir).toBe(join(dir, 'data'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the realtime limits of review round 3 (per-IP subscriptions, replay), with defaults', () => {
    const d = loadConfig({}, {}, tmpdir()).realtime;
    expect(d.maxSubscriptionsPerIp).toBe(1000);
    expect(d.maxReplay).toBe(10_000);
    const c = loadConfig({ REALTIME_MAX_SUBSCRIPTIONS_PER_IP: '50', REALTIME_MAX_REPLAY: '500' }, {}, tmpdir()).realtime;
    expect([c.maxSubscriptionsPerIp, c.maxReplay]).toEqual([50, 500]);
    expect(() => loadConfig({ REALTIME_MAX_REPLAY: '0' }, {}, tmpdir())).toThrow(/REALTIME_MAX_REPLAY/);
    expect(() => loadConfig({ REALTIME_MAX_SUBSCRIPTIONS_PER_IP: 'many' }, {}, tmpdir())).toThrow(/REALTIME_MAX_SUBSCRIPTIONS_PER_IP/);
  });

  it('refuses a malformed number with the variable name', () => {
    expect(() => loadConfig({ MAX_ROWS: 'lots' }, {}, tmpdir())).toThrow(/MAX_ROWS/);
  });

  it('reads the project keys from .env when the environment lacks them; an empty value means unset', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plinth-cfg-'));
    try {
      writeFileSync(join(dir, '.env'), 'PLINTH_PUBLIC_KEY=pk_from_dotenv\nPLINTH_SECRET_KEY="sk_from_dotenv"\n');
      expect(loadConfig({}, {}, dir)).toMatchObject({ publicKey: 'pk_from_dotenv', secretKey: 'sk_from_dotenv' });
      expect(loadConfig({ PLINTH_SECRET_KEY: 'sk_from_env' }, {}, dir)).toMatchObject({
        publicKey: 'pk_from_dotenv',
        secretKey: 'sk_from_env',
      });
      expect(loadConfig({ PLINTH_PUBLIC_KEY: '' }, {}, dir)).toMatchObject({ publicKey: null, secretKey: 'sk_from_dotenv' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
