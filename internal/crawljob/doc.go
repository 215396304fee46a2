// Package crawljob runs crawls, batch scrapes and extracts as jobs on the
// durable queue: the Runner starts and cancels them, its River workers
// fetch and record pages and queue their webhooks, and a periodic job
// purges expired jobs and repairs those a crash left stranded.
package crawljob
