// The first console page: the store's status. Renders with textContent only.
const store = document.getElementById("store");
const counts = document.querySelector("#counts tbody");
const error = document.getElementById("error");

function row(term, value) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  dd.textContent = value;
  store.append(dt, dd);
}

async function load() {
  try {
    const response = await fetch("/api/status", { headers: { Accept: "application/json" } });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
    row("Version", body.version);
    row("Store", body.store);
    row("Schema", body.schema);
    row("Migrations", String(body.migrations));
    for (const [name, count] of Object.entries(body.counts)) {
      const tr = document.createElement("tr");
      const th = document.createElement("td");
      th.textContent = name.replaceAll("_", " ");
      const td = document.createElement("td");
      td.className = "number";
      td.textContent = count.toLocaleString();
      tr.append(th, td);
      counts.append(tr);
    }
  } catch (e) {
    error.textContent = `Could not load the store's status: ${e.message}`;
    error.hidden = false;
  } finally {
    store.setAttribute("aria-busy", "false");
  }
}

load();
