import { createDb } from '../../../src/db/database.js';
import { createMerchant } from '../../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../../src/security/secret-box.js';
import { measureWebhooks } from './measure.js';
import { SCALE_BOX_KEY, freshDatabase } from './seed.js';
const seededUrl = process.argv[2]!;
const merchant = JSON.parse(process.argv[3]!);
const sdb = createDb(seededUrl, 10);
const empty = await freshDatabase('bench_relay_empty');
const m = await createMerchant(empty.db, new SecretBox(SCALE_BOX_KEY), { name: 'E', webhookUrl: 'https://shop.example/hooks' });
const et = { db: empty.db, url: empty.url, merchant: { merchantId: m.merchantId, key: m.testKey.key, secret: m.testKey.secret } };
const st = { db: sdb, url: seededUrl, merchant };
for (let i = 0; i < 3; i++) {
  const e = await measureWebhooks(et, 2000);
  const s = await measureWebhooks(st, 2000);
  console.log(`empty relay ${Math.round(e.relayPerSecond)} deliv ${Math.round(e.deliveryPerSecond)} | seeded relay ${Math.round(s.relayPerSecond)} deliv ${Math.round(s.deliveryPerSecond)}`);
}
await empty.drop(); await sdb.destroy(); process.exit(0);
