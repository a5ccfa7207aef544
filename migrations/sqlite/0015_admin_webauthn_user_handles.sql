-- Each admin's WebAuthn user handle (user.id in a passkey's creation options): 32 random bytes as base64url, made
-- when the admin first registers a passkey and kept for every later one, so an authenticator keeps one discoverable
-- credential per admin. It holds nothing personal (not the username), as WebAuthn asks.
ALTER TABLE gatehouse_admins ADD COLUMN webauthn_user_handle TEXT;
CREATE UNIQUE INDEX gatehouse_admins_webauthn_user_handle_idx ON gatehouse_admins (webauthn_user_handle);
