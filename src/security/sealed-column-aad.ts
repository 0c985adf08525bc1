// Associated data of each sealed column: binds a ciphertext to its table, row and column, so a sealed value copied
// into another row or column fails to open. The writer (ledger/) and every reader must use these same names.

export const apiKeySecretAad = (keyId: string): string => `api_keys:${keyId}:secret`;
export const webhookSecretAad = (merchantId: string): string => `merchants:${merchantId}:webhook_secret`;
export const previousWebhookSecretAad = (merchantId: string): string => `merchants:${merchantId}:webhook_secret_prev`;
export const totpSecretAad = (consoleUserId: string): string => `console_users:${consoleUserId}:totp_secret`;
