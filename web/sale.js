// SPDX-License-Identifier: BSD-3-Clause
// flashgate's sale page: count down to the start by the server's clock, one click, the purchase
// token, the reserve, then the result until it is final. Plain JavaScript, no build step; the
// API is docs/api.md, the page's own settings and states docs/page.md.
"use strict";
(() => {
	const cfg = window.FLASHGATE || {};
	const TEXTS = window.FLASHGATE_TEXTS || { en: {} };
	const query = new URLSearchParams(location.search);
	const eventId = String(query.get("event") || cfg.event || "");
	const api = String(cfg.api || "").replace(/\/+$/, "");
	const REQUEST_TIMEOUT_MS = 8000;
	const $ = (id) => document.getElementById(id);
	const ui = {
		main: $("sale"), name: $("name"), stock: $("stock"), status: $("status"),
		countdown: $("countdown"), countdownTime: $("countdown-time"), startsAt: $("starts-at"),
		countdownLabel: $("countdown-label"),
		line: $("line"), position: $("position"), wait: $("wait"), solve: $("solve"),
		solved: $("solved"),
		deadline: $("deadline"), deadlineTime: $("deadline-time"), order: $("order"),
		buy: $("buy"), pay: $("pay"), login: $("login"),
	};

	// ---- texts --------------------------------------------------------------------------
	function pickLang() {
		const wanted = [cfg.lang, query.get("lang"), ...(navigator.languages || [])];
		for (const l of wanted) {
			if (!l) continue;
			const s = String(l).toLowerCase();
			if (TEXTS[s]) return s;
			if (TEXTS[s.split("-")[0]]) return s.split("-")[0];
		}
		return "en";
	}
	const lang = pickLang();
	function t(key, vals) {
		let s = (TEXTS[lang] && TEXTS[lang][key]) || (TEXTS.en && TEXTS.en[key]) || key;
		for (const k in vals || {}) s = s.split("{" + k + "}").join(String(vals[k]));
		return s;
	}
	function applyTexts() {
		document.documentElement.lang = lang;
		for (const el of document.querySelectorAll("[data-text]")) el.textContent = t(el.dataset.text);
		for (const el of document.querySelectorAll("[data-label]"))
			el.setAttribute("aria-label", t(el.dataset.label));
		document.title = t("title");
	}

	// ---- the server's clock -------------------------------------------------------------
	// Every answer with server_time is a sample; the offset comes from the sample with the
	// shortest round trip (its midpoint is the closest guess of when the server stamped it),
	// renewed after a minute so that drift does not pile up. performance.now() is monotonic:
	// changing the machine's clock does not move the countdown.
	const mono = () => performance.timeOrigin + performance.now();
	let offset = 0, bestRtt = Infinity, bestAt = -Infinity;
	function clockSample(t0, t1, serverTime) {
		const rtt = t1 - t0;
		if (rtt <= bestRtt || t1 - bestAt > 60000) {
			offset = serverTime - (t0 + t1) / 2;
			bestRtt = rtt;
			bestAt = t1;
		}
	}
	const serverNow = () => mono() + offset;

	// ---- requests -----------------------------------------------------------------------
	// One request; never throws. status 0: no answer (network error or timeout). No cookies
	// (credentials "omit"): a request must fit one TCP segment (docs/api.md).
	async function call(method, path, headers) {
		const abort = new AbortController();
		const timer = setTimeout(() => abort.abort(), REQUEST_TIMEOUT_MS);
		const t0 = mono();
		try {
			const r = await fetch(api + path, {
				method, headers: headers || {}, cache: "no-store", credentials: "omit",
				signal: abort.signal,
			});
			let body = {};
			try {
				body = await r.json();
			} catch (e) {
				body = {};
			}
			if (body && typeof body.server_time === "number") clockSample(t0, mono(), body.server_time);
			// Retry-After is readable cross-origin only when the API exposes it; without it the
			// page's own backoff applies.
			const ra = parseInt(r.headers.get("Retry-After"), 10);
			return { status: r.status, body: body || {}, retryAfter: Number.isFinite(ra) ? ra : null };
		} catch (e) {
			return { status: 0, body: {}, retryAfter: null };
		} finally {
			clearTimeout(timer);
		}
	}
	const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

	// Exponential backoff with jitter, at least Retry-After: after n failures about
	// base * 2^n ms (at most cap), spread over [0.5, 1.5) of that so that clients refused
	// together do not come back together.
	function backoff(base, cap) {
		let n = 0;
		return {
			next(retryAfterS) {
				const d = Math.min(cap, base * 2 ** n++);
				const floor = (retryAfterS || 0) * 1000;
				return Math.max(floor, d * (0.5 + Math.random())) + (floor ? Math.random() * Math.min(floor, 2000) * 0.5 : 0);
			},
			reset() {
				n = 0;
			},
		};
	}
	const jitter = (ms) => ms * (0.75 + Math.random() * 0.5);

	// ---- the session token --------------------------------------------------------------
	async function getSession() {
		let s = cfg.session;
		if (typeof s === "function") {
			try {
				s = await s();
			} catch (e) {
				s = null;
			}
		}
		if (!s && cfg.sessionCookie) {
			for (const part of document.cookie.split(";")) {
				const i = part.indexOf("=");
				if (i > 0 && part.slice(0, i).trim() === cfg.sessionCookie)
					s = decodeURIComponent(part.slice(i + 1).trim());
			}
		}
		return typeof s === "string" && /^s1\.[0-9]+\./.test(s) ? s : null;
	}

	// ---- what this tab remembers (sessionStorage) ---------------------------------------
	// One record per API, event and user: the click, the purchase token, the receipt and the
	// last result. A reload resumes from it instead of reserving again. sessionStorage, not
	// localStorage: the bearer token and the receipt live only as long as the tab, never on
	// disk after the browser closes, nor in other tabs (docs/page.md, "Reload").
	let storeKey = null;
	let rec = {};
	function load(user) {
		storeKey = "flashgate:" + (api || location.origin) + ":" + eventId + ":" + user;
		try {
			rec = JSON.parse(sessionStorage.getItem(storeKey) || "{}") || {};
		} catch (e) {
			rec = {};
		}
	}
	function save() {
		try {
			if (storeKey) sessionStorage.setItem(storeKey, JSON.stringify(rec));
		} catch (e) {
			/* private mode or full: the page goes on without resuming */
		}
	}

	// ---- showing the state --------------------------------------------------------------
	let ev = null; // the event as GET /api/v1/events/{id} last answered
	let shown = null;
	const FINAL = ["paid", "sold_out", "expired", "cancelled", "closed", "no_event", "blocked",
		"session_bad", "error"];
	function show(state, vals, textKey) {
		ui.main.dataset.state = state;
		const text = t(textKey || state, vals);
		// The live region speaks on change only: a state, not every poll.
		if (ui.status.textContent !== text) ui.status.textContent = text;
		shown = state;
		// The countdown: to the start (or, with a draw, to the line's opening) while upcoming,
		// to the draw while the line is open.
		ui.countdown.hidden = !(ev && (state === "upcoming" || state === "queueing"));
		if (!ui.countdown.hidden) {
			const draw = !!ev.draw_at;
			ui.countdownLabel.textContent = t(state === "queueing" ? "draw_in_label" :
				draw ? "line_opens_in" : "starts_in");
			ui.startsAt.textContent = draw ? t("draw_at", { time: localTime(ev.draw_at) }) :
				t("starts_at", { time: localTime(ev.starts_at) });
		}
		// While the answers do not come (offline, busy), what the buyer holds stays shown: the
		// place in line, the order, its deadline and "Pay now" (paying is the shop's, not ours).
		// So too beside "log in again" when the login expired while the purchase token that
		// polls a held result was renewed: the reload after logging in resumes it.
		const held = ["offline", "busy", "session_bad"].includes(state) && rec.clicked && rec.status ?
			rec.status : state;
		ui.line.hidden = held !== "queued";
		ui.solve.hidden = state !== "solving";
		// The challenge's cost in this browser, once solved (kept in the record: solve_ms).
		ui.solved.hidden = !(rec.clicked && rec.solve_ms != null && state !== "solving");
		if (!ui.solved.hidden) ui.solved.textContent = t("solved_in", { t: seconds1(rec.solve_ms) });
		const hasOrder = !!rec.order_id && ["ordered", "paid", "expired", "cancelled"].includes(held);
		ui.order.hidden = !hasOrder;
		if (hasOrder) ui.order.textContent = t("order_id", { id: rec.order_id });
		ui.deadline.hidden = !(held === "ordered" && rec.pay_deadline);
		ui.pay.hidden = !(held === "ordered" && cfg.payUrl && rec.order_id);
		if (!ui.pay.hidden) ui.pay.href = String(cfg.payUrl).split("{order_id}").join(rec.order_id);
		// Once the buyer has an item or a final answer, the greyed button has nothing to say.
		ui.buy.hidden = ["reserved", "ordered", "paid", "duplicate", "expired", "cancelled"]
			.includes(held);
		ui.login.hidden = state !== "login" && state !== "session_bad";
		if (!ui.login.hidden) {
			if (cfg.loginUrl) ui.login.href = cfg.loginUrl;
			else ui.login.hidden = true;
		}
		if (rec.clicked) ui.stock.hidden = true;
		updateButton();
		tick();
	}
	let session = null;
	// Whether a click may buy now: the page's own state decides, not the button's disabled
	// attribute alone (a script or an extension may take that off).
	function buyable() {
		const line = !!ev && ev.state === "queueing";
		return !rec.clicked && !!session && !!ev && (ev.state === "open" || line) &&
			shown === ev.state;
	}
	function updateButton() {
		// Open: "Buy now". With a draw, while the line is open (before the start too): "Join
		// the line"; while drawing, nothing to click.
		const line = !!ev && ev.state === "queueing";
		const can = buyable();
		const key = line || (rec.clicked && rec.joined) ? "join" : "buy";
		if (ui.buy.dataset.text !== key) {
			ui.buy.dataset.text = key;
			ui.buy.dataset.label = key + "_label";
			ui.buy.textContent = t(key);
			ui.buy.setAttribute("aria-label", t(key + "_label"));
		}
		ui.buy.disabled = !can;
		ui.buy.classList.toggle("clicked", !!rec.clicked);
		ui.buy.setAttribute("aria-disabled", String(!can));
	}
	function two(n) {
		return String(n).padStart(2, "0");
	}
	function hms(ms) {
		const s = Math.max(0, Math.ceil(ms / 1000));
		const d = Math.floor(s / 86400);
		const clock = two(Math.floor(s / 3600) % 24) + ":" + two(Math.floor(s / 60) % 60) + ":" + two(s % 60);
		return d > 0 ? t("days", { n: d }) + " " + clock : clock;
	}
	function localTime(ms) {
		return new Date(ms).toLocaleString(document.documentElement.lang);
	}
	function seconds1(ms) {
		return t("seconds", { n: (ms / 1000).toFixed(ms < 10000 ? 2 : 1) });
	}
	function duration(ms) {
		const s = Math.max(1, Math.ceil(ms / 1000));
		return s < 120 ? t("seconds", { n: s }) : t("minutes", { n: Math.ceil(s / 60) });
	}
	function showStock() {
		ui.stock.hidden = !(ev && typeof ev.stock === "number" && ev.state === "open" && !rec.clicked);
		if (!ui.stock.hidden) ui.stock.textContent = t("items_left", { n: ev.stock });
	}

	// Four times a second: the countdowns, and the start reached by the server's clock.
	function tick() {
		const now = serverNow();
		if (ev) {
			const was = ev.state;
			advance(ev, now);
			if (ev.state !== was) {
				if (!rec.clicked) showEventState();
				if (ev.state === "drawing") scheduleRefresh();
			}
			if (ev.state === "upcoming") ui.countdownTime.textContent = hms(opensAt() - now);
			else if (ev.state === "queueing") ui.countdownTime.textContent = hms(ev.draw_at - now);
		}
		// Queued before the draw: the time left until it, counting down between polls.
		if (!ui.line.hidden && rec.position == null && rec.draw_at) ui.wait.textContent = drawIn(now);
		if (ev && ev.ends_at && now >= ev.ends_at && ev.state !== "closed" && !rec.clicked) {
			ev.state = "closed";
			showEventState();
		}
		if (!ui.deadline.hidden) ui.deadlineTime.textContent = hms(rec.pay_deadline - now);
	}

	// ---- before the click: the event ----------------------------------------------------
	// When buyers may first click: the start, or with a draw the opening of the line.
	const opensAt = () => (ev.queue_opens_at || ev.starts_at);
	// The event's state by the server's clock, between fetches: upcoming turns open at the
	// start; with a draw, upcoming turns queueing when the line opens and queueing drawing at
	// draw_at. What follows the draw (open, sold out) only the server says.
	function advance(e, now) {
		if (e.state === "upcoming" && now >= (e.queue_opens_at || e.starts_at))
			e.state = e.draw_at ? "queueing" : "open";
		if (e.state === "queueing" && e.draw_at && now >= e.draw_at) e.state = "drawing";
	}
	async function fetchEvent() {
		const retry = backoff(1000, 15000);
		for (;;) {
			const r = await call("GET", "/api/v1/events/" + encodeURIComponent(eventId));
			if (r.status === 200 && r.body.starts_at) {
				const b = r.body;
				// The server says "upcoming" until starts_at (or queue_opens_at); the page's tick
				// opens it on time (and an answer stamped just before does not close it again).
				// A sale with a draw (docs/fairness.md) has queue_opens_at and draw_at.
				const num = (v) => (typeof v === "number" ? v : null);
				ev = {
					name: b.name, state: b.state, starts_at: b.starts_at, ends_at: b.ends_at,
					stock: b.stock, queue_opens_at: num(b.queue_opens_at), draw_at: num(b.draw_at),
					challenge_bits: num(b.challenge_bits) || 0, draw: b.draw || null,
				};
				advance(ev, serverNow());
				if (b.name) {
					ui.name.textContent = b.name;
					document.title = b.name;
				}
				return true;
			}
			if (r.status === 404) return false;
			if (!ev) show(r.status === 0 ? "offline" : "loading");
			await sleep(retry.next(r.retryAfter));
		}
	}
	function showEventState() {
		showStock();
		if (!ev) return;
		if ((ev.state === "open" || ev.state === "queueing") && !session) return show("login");
		show(["upcoming", "queueing", "drawing", "open", "sold_out", "closed"].includes(ev.state) ?
			ev.state : "loading");
	}
	// Until the click: the event again now and then (state, stock, the clock), more often
	// near the start; a sold-out sale can open again when unpaid orders expire.
	let refreshTimer = null;
	function scheduleRefresh() {
		clearTimeout(refreshTimer);
		if (rec.clicked || !ev || ev.state === "closed") return;
		let ms = 15000;
		if (ev.state === "upcoming") ms = Math.max(1000, Math.min(15000, (opensAt() - serverNow()) / 3));
		else if (ev.state === "queueing") ms = Math.max(1000, Math.min(15000, (ev.draw_at - serverNow()) / 3));
		else if (ev.state === "drawing") ms = 1000; // the sale opens (or sells out) once drawn
		refreshTimer = setTimeout(async () => {
			if (rec.clicked) return;
			if (await fetchEvent()) {
				if (!rec.clicked) showEventState();
			}
			scheduleRefresh();
		}, jitter(ms));
	}

	// ---- the click ----------------------------------------------------------------------
	function onBuy() {
		// A second click does nothing, nor a click before the start.
		if (rec.clicked || ui.buy.disabled || !buyable()) return;
		rec.clicked = true;
		rec.clicked_at = Math.round(serverNow());
		rec.joined = ev.state === "queueing"; // in the line for the draw
		save();
		updateButton();
		clearTimeout(refreshTimer);
		purchase();
	}

	// Until a final state: a purchase token (when none is held or it expired), the reserve,
	// then the result. "again" from a step means: start over with what is stored.
	// "renew" is no attempt: a held result is polled with a purchase token, renewed each time
	// it expires, for as long as the buyer holds it (a pay window, hours on a waiting list).
	async function purchase() {
		for (let tries = 0; tries < 10; ) {
			if (!rec.receipt && !rec.held) {
				if (!rec.token || !(rec.token_expires > serverNow() + 5000)) {
					if (!(await getToken())) return;
				}
				const r = await reserve();
				if (r === "again") tries++;
				if (r === "again" || r === "renew") continue;
				if (r !== "queued") return;
			}
			const p = await pollResult(false);
			if (p === "again") tries++;
			else if (p !== "renew") return;
		}
		show("error", { why: "too many attempts" });
	}
	// Whether the buyer holds a result while its purchase token is renewed (a new token, whose
	// reserve is answered 200 with that result): what it holds stays shown meanwhile, not
	// "Getting your place…" with the order hidden and the greyed button back.
	const HOLDING = ["queued", "waiting", "reserved", "ordered", "duplicate"];
	const holding = () => !!rec.clicked && !rec.receipt && HOLDING.includes(rec.status);
	// What the buyer holds (rec.status), as the last poll showed it.
	function showHeld() {
		if (rec.status === "queued") return showQueued();
		const back = rec.came_back && (rec.status === "reserved" || rec.status === "ordered");
		show(rec.status, { n: rec.ahead != null ? rec.ahead : "?" }, back ? "came_back" : rec.status);
	}
	// A step of the purchase on its way: said, unless the buyer holds a result (above).
	function showStep(state, vals) {
		if (holding()) showHeld();
		else show(state, vals);
	}

	async function getToken() {
		const retry = backoff(1000, 10000);
		for (;;) {
			showStep("getting_token");
			const r = await call("POST", "/api/v1/events/" + encodeURIComponent(eventId) + "/token",
				{ Authorization: "Bearer " + session });
			const b = r.body;
			if (r.status === 200 && b.token && b.reserve_path) {
				rec.token = b.token;
				rec.reserve_path = b.reserve_path;
				rec.token_expires = b.expires_at || serverNow() + 60000;
				rec.solution = null;
				if (b.challenge) rec.solution = await solve(b.challenge);
				save();
				return true;
			}
			if (r.status === 425) {
				// Too early by the server: until its start (or the line's opening), whether or not
				// Retry-After is readable.
				const until = ev ? opensAt() - serverNow() : 0;
				await sleep(Math.max(until, r.retryAfter != null ? r.retryAfter * 1000 : 1000) +
					Math.random() * 500);
				continue;
			}
			const end = { 410: /closed/.test(b.error || "") ? "closed" : "sold_out", 401: "session_bad",
				403: "blocked", 404: "no_event" }[r.status];
			if (end === "session_bad") {
				// Not stored as final: the login is the shop's, not the sale's. Once the buyer
				// has logged in again, a reload offers the button again; or, to a buyer who
				// holds a result (its token being renewed), resumes it.
				if (!holding()) rec.clicked = false;
				rec.token = null;
				save();
				show(end);
				return false;
			}
			if (end) {
				finish(end);
				return false;
			}
			show(r.status === 0 ? "offline" : "busy");
			await sleep(retry.next(r.retryAfter));
		}
	}

	async function reserve() {
		const retry = backoff(1000, 10000);
		for (let tries = 0; ; tries++) {
			showStep("sending");
			const h = { "X-Flash-Token": rec.token };
			if (cfg.deviceId) h["X-Device-Id"] = String(cfg.deviceId);
			if (rec.solution) h["X-Flash-Solution"] = String(rec.solution);
			const r = await call("POST", rec.reserve_path, h);
			const b = r.body;
			if (r.status === 202 && b.receipt) {
				rec.receipt = b.receipt;
				rec.result_path = b.result_path;
				rec.status = "queued";
				rec.position = rec.wait_ms = null;
				// In the line before its draw: the draw's countdown from now, not from the first
				// poll's answer (until then the page said only "You are in line").
				rec.draw_at = rec.joined && ev && ev.draw_at > serverNow() ? ev.draw_at : null;
				save();
				showQueued();
				return "queued";
			}
			if (r.status === 200 && b.status) {
				// This data plane already holds the user's result (another tab's click, or a
				// reserve whose 202 was lost): no receipt comes, the purchase token polls it
				// (docs/api.md).
				rec.held = true;
				rec.status = b.status;
				save();
				return "queued";
			}
			if (r.status === 410) {
				// An earlier attempt (a lost answer, another tab) may hold an item: ask the
				// result with the purchase token before saying sold out (docs/api.md).
				const probe = await pollResult(true);
				if (probe === "none") finish(/closed/.test(b.error || "") ? "closed" : "sold_out");
				return probe === "again" || probe === "renew" ? probe : "stop";
			}
			if (r.status === 425) {
				// Too early, or the draw is in progress (Retry-After says when to come back).
				await sleep(Math.max(1000, ev ? opensAt() - serverNow() : 1000,
					r.retryAfter != null ? r.retryAfter * 1000 : 0) + Math.random() * 500);
				continue;
			}
			if (r.status === 403) {
				const e = b.error || "";
				if (e === "blocked") {
					finish("blocked");
					return "stop";
				}
				// An expired purchase token, a retired reserve path or a challenge not solved (the
				// worker failed, docs/api.md: pow_missing, pow_wrong): a new token, a few times.
				if (tries < 3 && /expired|reserve path|challenge|solution|pow/.test(e)) {
					rec.token = null;
					save();
					return "again";
				}
				finish("error", { why: e || r.status });
				return "stop";
			}
			if (r.status === 404) {
				finish("no_event");
				return "stop";
			}
			show(r.status === 0 ? "offline" : "busy");
			await sleep(retry.next(r.retryAfter));
		}
	}

	// Polls the result with the receipt (or, probing after a 410 or for a held result, the
	// purchase token) until it is final. Returns "again" to reserve again, "renew" when the
	// purchase token that polled a held result (or found one) expired after answering, "none"
	// when a probe found nothing of the user's, "stop" otherwise.
	async function pollResult(probe) {
		const retry = backoff(1000, 15000);
		const path = rec.result_path || "/api/v1/events/" + encodeURIComponent(eventId) + "/result";
		let queued = 0, fails = 0, found = false, answered = false;
		for (;;) {
			const proof = probe || !rec.receipt ? rec.token : rec.receipt;
			const r = await call("GET", path, { "X-Flash-Token": proof });
			const b = r.body;
			let wait;
			if (r.status === 200 && b.status) {
				fails = 0;
				answered = true;
				retry.reset();
				const st = b.status;
				if (b.order_id) rec.order_id = b.order_id;
				if (b.pay_deadline) rec.pay_deadline = b.pay_deadline;
				if (st === "queued") {
					queued++;
					if (probe && queued >= 3) return "none";
					rec.status = "queued";
					// Before the draw: draw_at and wait_ms (until it); once drawn: position (the
					// entrants ahead not yet decided) and wait_ms (estimated), docs/api.md.
					rec.position = typeof b.position === "number" ? b.position : null;
					rec.wait_ms = typeof b.wait_ms === "number" ? b.wait_ms : null;
					rec.draw_at = rec.position == null && typeof b.draw_at === "number" ?
						b.draw_at : null;
					showQueued();
					// 1 s, growing to 4 s while nothing changes; sooner when the wait is short.
					wait = Math.min(4000, 1000 * 1.25 ** queued);
					if (rec.wait_ms != null) wait = Math.max(1000, Math.min(wait, rec.wait_ms / 2));
				} else if (st === "waiting") {
					// Beyond the stock after the draw: on the waiting list while items may come
					// back (an order not paid in time); "ahead": entrants before it still
					// without one (docs/api.md).
					rec.status = "waiting";
					rec.ahead = typeof b.ahead === "number" ? b.ahead : null;
					show("waiting", { n: rec.ahead != null ? rec.ahead : "?" });
					wait = 4000;
				} else if (st === "retry") {
					rec.receipt = null;
					rec.held = false;
					rec.status = null;
					save();
					return "again";
				} else if (["paid", "sold_out", "expired", "cancelled"].includes(st)) {
					finish(st);
					return "stop";
				} else if (st === "ordered" || st === "reserved" || st === "duplicate") {
					found = true;
					// An item that came back to the waiting list: said so until it is paid.
					if (rec.status === "waiting" || rec.came_back) rec.came_back = true;
					rec.status = st;
					save();
					show(st, {}, rec.came_back && st !== "duplicate" ? "came_back" : st);
					// While the order waits for payment: slowly, then quickly near the deadline.
					const left = rec.pay_deadline ? rec.pay_deadline - serverNow() : 0;
					wait = st === "ordered" && left > 15000 ? 5000 : 1500;
				} else {
					finish("error", { why: st });
					return "stop";
				}
				save();
				await sleep(jitter(wait));
				continue;
			}
			if (r.status === 403 && probe && found) {
				// The purchase token that found the item expired: a new one, and a reserve that
				// is answered the result (or 410 again, once sold out, and found again): a
				// renewal, as below.
				rec.token = null;
				save();
				return /expired/.test(b.error || "") ? "renew" : "again";
			}
			if (r.status === 403 && probe) return "none";
			if (r.status === 403 && !rec.receipt) {
				// The purchase token that polls a held result expired: a new one, whose reserve
				// answers the result again. One that had answered lived its life: a renewal.
				rec.token = null;
				rec.held = false;
				save();
				return answered && /expired/.test(b.error || "") ? "renew" : "again";
			}
			if (r.status === 403 || r.status === 404) {
				finish(r.status === 404 ? "no_event" : "error", { why: b.error || r.status });
				return "stop";
			}
			// 429, 503, 5xx, no answer: keep what is shown, say "busy" only when it lasts.
			if (++fails >= 3) show(r.status === 0 ? "offline" : "busy");
			await sleep(retry.next(r.retryAfter));
		}
	}
	// "The draw is in T" until draw_at, then "The draw is in progress" until the place is known.
	function drawIn(now) {
		return rec.draw_at > now ? t("draw_in", { t: duration(rec.draw_at - now) }) : t("drawing");
	}
	function showQueued() {
		ui.position.hidden = rec.position == null;
		if (rec.position != null) ui.position.textContent = t("position", { n: rec.position });
		const drawAt = rec.position == null ? rec.draw_at : null;
		ui.wait.hidden = rec.wait_ms == null && !drawAt;
		if (drawAt) ui.wait.textContent = drawIn(serverNow());
		else if (rec.wait_ms != null) ui.wait.textContent = t("wait", { t: duration(rec.wait_ms) });
		show("queued", {}, drawAt ? "queued_draw" : "queued");
	}
	// A final state: stored, so that a reload shows it again without asking.
	function finish(state, vals) {
		rec.status = state;
		rec.final = state;
		rec.why = vals && vals.why ? String(vals.why) : undefined;
		save();
		show(state, vals);
		return true;
	}

	// ---- the proof-of-work challenge ----------------------------------------------------
	// When the token answer carries a challenge ({"prefix", "bits"}, docs/api.md), a Web Worker
	// (pow-worker.js) finds a solution while the page shows its progress; the reserve carries
	// it in X-Flash-Solution. The time it took here is kept (solve_ms, solve_tries) and shown.
	function solve(challenge) {
		// Renewing a held result's token, what the buyer holds stays shown instead.
		const quiet = holding();
		return new Promise((done) => {
			showStep("solving", { pct: 0 });
			const t0 = performance.now();
			let w;
			try {
				w = new Worker("pow-worker.js");
			} catch (e) {
				done(null);
				return;
			}
			w.onmessage = (m) => {
				if (m.data.progress != null) {
					ui.solve.value = m.data.progress;
					if (!quiet) ui.status.textContent = t("solving", { pct: Math.floor(m.data.progress) });
					return;
				}
				rec.solve_ms = Math.round(performance.now() - t0);
				rec.solve_tries = m.data.tries;
				rec.solve_bits = challenge.bits;
				w.terminate();
				done(m.data.solution != null ? m.data.solution : null);
			};
			w.onerror = () => {
				w.terminate();
				done(null);
			};
			w.postMessage(challenge);
		});
	}

	// ---- start ----------------------------------------------------------------------------
	async function main() {
		applyTexts();
		show("loading");
		ui.buy.addEventListener("click", onBuy);
		setInterval(tick, 250);
		if (!/^[1-9][0-9]{0,9}$/.test(eventId)) return show("error", { why: "no event id" });
		session = await getSession();
		load(session ? session.split(".")[1] : "anonymous");
		if (!(await fetchEvent())) return show("no_event");
		if (rec.final) return show(rec.final, { why: rec.why });
		if (rec.clicked && session) {
			// A reload: the stored receipt is polled, nothing is reserved again.
			if (rec.status && (rec.receipt || rec.held || holding())) showHeld();
			return purchase();
		}
		showEventState();
		scheduleRefresh();
	}
	// For tests and the shop's own scripts: read-only views.
	window.flashgateSale = {
		state: () => shown,
		record: () => JSON.parse(JSON.stringify(rec)),
		serverNow,
		clockOffset: () => offset,
	};
	main();
})();
