'use strict';
// A live page (the session console, the dashboard): its root names a live view (data-live-url) and the
// ETag of what it shows (data-etag); its parts are regions ([data-region]). Every data-poll-ms
// milliseconds (RALPH_CONSOLE_POLL_MS) it asks the live view with If-None-Match: 304 while nothing
// changed, else every region drawn as a reload would draw it ({"regions": {name: html}}), and it
// redraws the regions that differ, keeping what the operator is typing (text, choices, focus and caret).
// One request per poll; none while the tab is hidden. Ages (<time data-age>) are counted here between
// polls, in the server's words.
{
    const root = document.querySelector('[data-live-url]');

    // -- ages, as ralphsite/templatetags/ralphsite_time.py words them ------------------------------
    const UNITS = [['year', 365 * 86400], ['month', 30 * 86400], ['week', 7 * 86400], ['day', 86400],
        ['hour', 3600], ['minute', 60]];

    function span(seconds) {
        for (const [unit, size] of UNITS) {
            const count = Math.floor(seconds / size);
            if (count >= 1) {
                return count + '\u00a0' + unit + (count === 1 ? '' : 's');
            }
        }
        return '';
    }

    function ageText(moment, how, now) {
        const seconds = (now - moment) / 1000;
        if (how === 'in') {
            if (seconds >= 0) {
                return 'expired';
            }
            return -seconds < 60 ? 'in under a minute' : 'in ' + span(-seconds);
        }
        if (seconds < 60) {
            return how === 'for' ? 'under a minute' : 'just now';
        }
        return how === 'for' ? span(seconds) : span(seconds) + ' ago';
    }

    function countAges() {
        const now = Date.now();
        for (const time of document.querySelectorAll('time[data-age]')) {
            const moment = Date.parse(time.dateTime);
            if (!Number.isNaN(moment)) {
                time.textContent = ageText(moment, time.dataset.age, now);
            }
        }
    }

    // -- redrawing a region without losing what is typed in it -------------------------------------
    function fieldKey(field) {
        const form = field.form;
        return (form && form.dataset.key ? form.dataset.key : '') + '/' + field.name;
    }

    function typed(region) {
        const values = new Map();
        for (const field of region.querySelectorAll('textarea, select, input[type="text"], input:not([type])')) {
            if (field.name) {
                values.set(fieldKey(field), field.value);
            }
        }
        const active = document.activeElement;
        const focused = active && region.contains(active) && active.name ? {
            key: fieldKey(active), start: active.selectionStart, end: active.selectionEnd,
        } : null;
        return {values, focused};
    }

    function restore(region, kept) {
        for (const field of region.querySelectorAll('textarea, select, input[type="text"], input:not([type])')) {
            const key = fieldKey(field);
            if (kept.values.has(key)) {
                field.value = kept.values.get(key);
            }
            if (kept.focused && kept.focused.key === key) {
                field.focus();
                if (typeof kept.focused.start === 'number' && field.setSelectionRange) {
                    field.setSelectionRange(kept.focused.start, kept.focused.end);
                }
            }
        }
    }

    function openFolds(region) {
        return new Set([...region.querySelectorAll('details[open][data-key]')].map((fold) => fold.dataset.key));
    }

    function newestEvent(region) {
        return Math.max(0, ...[...region.querySelectorAll('[data-event]')].map((item) => Number(item.dataset.event)));
    }

    function redraw(region, html) {
        const kept = typed(region);
        const folds = openFolds(region);
        const newest = newestEvent(region);
        region.innerHTML = html;
        restore(region, kept);
        for (const fold of region.querySelectorAll('details[data-key]')) {
            if (folds.has(fold.dataset.key)) {
                fold.open = true;
            }
        }
        for (const item of region.querySelectorAll('[data-event]')) {
            if (newest && Number(item.dataset.event) > newest) {
                item.classList.add('rc-event-new');  // arrived since the last poll
            }
        }
    }

    // -- the poll -------------------------------------------------------------------------------------
    const drawn = new Map();
    let online = true;

    function indicate() {
        const indicator = root.querySelector('[data-live="indicator"]');
        if (indicator) {
            const ended = indicator.classList.contains('rc-ended');
            indicator.classList.toggle('rc-on', online && !ended);
            indicator.classList.toggle('rc-off', !online);
            indicator.textContent = !online ? 'offline: retrying' : ended ? 'ended' : 'live';
        }
    }

    function apply(regions) {
        for (const [name, html] of Object.entries(regions)) {
            const region = root.querySelector('[data-region="' + CSS.escape(name) + '"]');
            if (region && drawn.get(name) !== html) {
                redraw(region, html);
                drawn.set(name, html);
            }
        }
    }

    let busy = false;

    async function poll() {
        if (document.hidden || busy) {
            return;
        }
        busy = true;
        try {
            const response = await fetch(root.dataset.liveUrl, {
                headers: {'Accept': 'application/json', 'If-None-Match': root.dataset.etag},
                credentials: 'same-origin', cache: 'no-store',
            });
            if (response.status === 200) {
                apply((await response.json()).regions);
                root.dataset.etag = response.headers.get('ETag');
            }
            online = response.status === 200 || response.status === 304;
            if (online) {
                root.dataset.polls = String(Number(root.dataset.polls || 0) + 1);
            }
        } catch (error) {
            online = false;
        } finally {
            busy = false;
        }
        indicate();
        countAges();
    }

    if (root) {
        indicate();
        countAges();
        window.setInterval(poll, Number(root.dataset.pollMs) || 2000);
        document.addEventListener('visibilitychange', poll);
    }
}
