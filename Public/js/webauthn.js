// The browser's side of passkeys: WebAuthn's JSON options (base64url strings, as the API sends them) turned into the
// ArrayBuffers navigator.credentials wants, and the credential turned back into RegistrationResponseJSON /
// AuthenticationResponseJSON (WebAuthn Level 3, §5.1.8 and §5.1.9 serialisation) for the API to verify.

/** Whether this browser can use passkeys here (a secure context: https, or http on localhost). */
export function passkeysAvailable() {
  return typeof window.PublicKeyCredential === "function" && window.isSecureContext === true;
}

/**
 * On a console opened by an IP address (http://127.0.0.1:PORT), where browsers refuse passkeys, the same page on
 * http://localhost:PORT; null elsewhere.
 */
export function passkeyAddress() {
  const ip = /^(\d{1,3}\.){3}\d{1,3}$/.test(location.hostname) || location.hostname.startsWith("[");
  if (!ip || !["127.0.0.1", "[::1]"].includes(location.hostname)) return null;
  return `${location.protocol}//localhost${location.port ? `:${location.port}` : ""}${location.pathname}${location.hash}`;
}

function fromBase64url(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(text.length / 4) * 4, "=");
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

function toBase64url(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function descriptors(list) {
  return (list ?? []).map((d) => ({ ...d, id: fromBase64url(d.id) }));
}

/** What every credential serialises alike (§5.1.8, §5.1.9), with its `response` members. */
function credentialJSON(credential, response) {
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    response: { clientDataJSON: toBase64url(credential.response.clientDataJSON), ...response },
  };
}

/** Creates a passkey from creation options (PublicKeyCredentialCreationOptionsJSON); gives RegistrationResponseJSON. */
export async function createPasskey(options) {
  const publicKey = {
    ...options,
    challenge: fromBase64url(options.challenge),
    user: { ...options.user, id: fromBase64url(options.user.id) },
    excludeCredentials: descriptors(options.excludeCredentials),
  };
  const credential = await navigator.credentials.create({ publicKey });
  return credentialJSON(credential, {
    attestationObject: toBase64url(credential.response.attestationObject),
    transports: credential.response.getTransports?.() ?? [],
  });
}

/** Signs in with a passkey from request options (PublicKeyCredentialRequestOptionsJSON); gives AuthenticationResponseJSON. */
export async function usePasskey(options) {
  const publicKey = { ...options, challenge: fromBase64url(options.challenge), allowCredentials: descriptors(options.allowCredentials) };
  const credential = await navigator.credentials.get({ publicKey });
  const response = credential.response;
  return credentialJSON(credential, {
    authenticatorData: toBase64url(response.authenticatorData),
    signature: toBase64url(response.signature),
    userHandle: response.userHandle ? toBase64url(response.userHandle) : undefined,
  });
}

/** A passkey refusal in words: the browser's NotAllowedError covers a cancel, a timeout and no matching key. */
export function passkeyFailure(error) {
  if (error?.name === "NotAllowedError") return "The passkey was not used (cancelled, timed out, or no passkey for this console on this device).";
  if (error?.name === "SecurityError") return "This browser refuses passkeys for this address: open the console by its name (https, or http://localhost).";
  return error?.message ?? String(error);
}
