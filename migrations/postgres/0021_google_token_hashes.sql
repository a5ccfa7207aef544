-- Each Google account's refresh token as Google's RISC `token-revoked` event names it by hash
-- (`hash_base64_sha512_sha512`), beside the token's first 16 characters, which tell a token Better Auth has replaced
-- since. A hash cannot be looked up in Better Auth's table; this one is filled on the first such event and brought up
-- to date when a hash is not found (`GoogleTokenHashes`).
CREATE TABLE gatehouse_google_token_hashes (
    account_id TEXT PRIMARY KEY,
    token_prefix TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX gatehouse_google_token_hashes_hash_idx ON gatehouse_google_token_hashes (hash);
