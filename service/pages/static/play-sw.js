// The Play page's service worker: the page and its assets come from the network when it answers
// and from this cache when it does not, so a table opened once still opens on a phone that has
// lost its connection (its script then says so, and carries on when the connection is back).
// The game itself is never cached: /api/ always goes to the server, which keeps the game.
"use strict";

const CACHE = "gongzhu-play-2";
const SHELL = [
  "/play", "/assets/pages.css", "/assets/pages.js", "/assets/play.css", "/assets/play.js",
  "/assets/favicon.svg",
];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

// A page asks to be kept (its first visit came before this worker was there to cache it).
self.addEventListener("message", (event) => {
  const url = event.data && event.data.keep;
  if (typeof url === "string" && new URL(url).origin === self.location.origin) {
    event.waitUntil(caches.open(CACHE).then((cache) => cache.add(url)));
  }
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/api/")) return;
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(event.request, copy));
        }
        return response;
      })
      .catch(() => caches.match(event.request, { ignoreSearch: true })),
  );
});
