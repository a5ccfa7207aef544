// The Admins card of the Account security page (admins only): every console admin with their role, where they come
// from, their factors and last login, and Disable / Enable / Remove (step-up; a second admin's approval when the store
// requires it for `admins`). Adding an admin and setting a password stay on the host: `gatehouse admins add`.
import { card, clear, confirmInline, el, errorBanner, pill, table, time } from "../dom.js";

export async function adminsCard(api, reload) {
  const admins = await api.get("/api/admins");
  const me = api.session()?.username;
  return card("Admins",
    el("p", { class: "muted", text: "Disabling an admin ends their console sessions at once. Add admins and set passwords on the host (gatehouse admins add NAME --role ROLE); with single sign-on, your identity provider's groups decide." }),
    el("div", { id: "admins-table" }, table(["Admin", "Role", "Source", "Status", "Second factors", "Last login", ""], admins.map((admin) => {
      const slot = el("div", { class: "row-actions", "aria-live": "polite" });
      const self = admin.username === me;
      const buttons = self ? [el("span", { class: "muted small", text: "you" })] : [
        button(api, admin, admin.disabled ? "enable" : "disable", slot, reload),
        button(api, admin, "remove", slot, reload),
      ];
      const factors = (admin.factors ?? []).filter((f) => f.confirmed).map((f) => (f.kind === "webauthn" ? "passkey" : "app"));
      return [el("span", { class: "admin-name", text: admin.username }), admin.role, admin.source, pill(admin.disabled ? "critical" : "ok", admin.disabled ? "disabled" : "enabled"),
        factors.length ? factors.join(", ") : "none", admin.lastLoginAt ? time(admin.lastLoginAt) : "never",
        el("div", {}, el("div", { class: "actions" }, buttons), slot)];
    }), { caption: "Console admins" })));
}

const WORDS = {
  disable: { label: "Disable", question: (name) => `Disable ${name}? They can no longer sign in, and their sessions end now.`, danger: true },
  enable: { label: "Enable", question: (name) => `Let ${name} sign in again?`, danger: false },
  remove: { label: "Remove", question: (name) => `Remove ${name} and their second factors? This cannot be undone here.`, danger: true },
};

function button(api, admin, verb, slot, reload) {
  const words = WORDS[verb];
  const control = el("button", { type: "button", class: `${words.danger ? "danger" : "secondary"} small-button`, "data-admin": admin.username, "data-verb": verb, text: words.label });
  control.addEventListener("click", () => confirmInline(slot, {
    question: words.question(admin.username), confirmLabel: words.label, danger: words.danger, returnTo: control,
    action: async () => {
      try {
        await api.post(`/api/admins/${encodeURIComponent(admin.username)}/${verb}`, {});
        reload();
      } catch (error) {
        clear(slot).append(errorBanner(error));
      }
    },
  }));
  return control;
}
