// The live top's feed: GET /boards/:board/stream read with fetch (EventSource cannot send the API key),
// reconnecting with Last-Event-ID (a board's other metric too: ?metric=). Apart from dashboard.js, which
// renders.
'use strict';

window.TrendboardFeed = (() => {
  /** What the page waits before reconnecting a dropped stream. */
  const RETRY_MS = 1000;
  const { authHeaders, parseEvent, retryDelayMs, sleep } = window.TrendboardKit;

  /** Reads the event stream at `url` until aborted; reconnects with Last-Event-ID (the server answers a fresh snapshot). */
  async function stream(url, { render, setStatus }, signal) {
    let lastId = '';
    while (!signal.aborted) {
      try {
        const response = await fetch(url, {
          headers: { ...authHeaders(), Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) },
          signal,
        });
        if (!response.ok) {
          const body = await response.json().catch(() => ({}));
          const delay = retryDelayMs(response, body);
          if (delay !== undefined) {
            // A window still draining an expired slot (or a busy instance): it passes within a second or so.
            setStatus('catching up…');
            await sleep(delay, signal);
            continue;
          }
          setStatus(`stream refused: ${body.message || response.status}`);
        } else {
          setStatus('live', true);
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value;
            let cut;
            while ((cut = buffer.indexOf('\n\n')) >= 0) {
              const event = parseEvent(buffer.slice(0, cut));
              buffer = buffer.slice(cut + 2);
              if (event.id) lastId = event.id;
              if (event.event === 'snapshot' || event.event === 'top') render(JSON.parse(event.data));
            }
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        setStatus(`stream lost: ${error.message}`);
      }
      if (!signal.aborted) setStatus('reconnecting…');
      await sleep(RETRY_MS, signal);
    }
  }

  return { stream };
})();
