'use strict';
// The session console's live activity feed (ledger_app/admin.py, LedgerEventAdmin.feed_view): every
// few seconds it asks for the session's events after the newest one shown and puts them on top, and
// redraws the header from the same answer. No page reload; it rests while the tab is hidden.
{
    const POLL_MS = 3000;
    const KEEP = 300;
    const list = document.getElementById('rc-events');
    const indicator = document.querySelector('[data-live="indicator"]');

    function text(tag, className, value) {
        const element = document.createElement(tag);
        if (className) {
            element.className = className;
        }
        element.textContent = value;
        return element;
    }

    function row(event) {
        const item = document.createElement('li');
        item.className = 'rc-event rc-event-new' + (event.failed ? ' rc-event-failed' : '');
        item.dataset.id = event.id;
        const time = text('time', '', event.at.slice(11, 19));
        time.dateTime = event.at;
        item.append(time, ' ');
        const type = text('a', 'rc-event-type', event.type);
        type.href = event.url;
        item.append(type, ' ');
        if (event.task_key) {
            item.append(text('span', 'rc-event-task', event.task_key), ' ');
        }
        if (event.agent) {
            item.append(text('span', 'rc-event-agent', event.agent), ' ');
        }
        item.append(text('span', 'rc-event-message', event.message.length > 200 ? event.message.slice(0, 199) + '…' : event.message));
        if (event.cost_usd) {
            item.append(' ', text('span', 'rc-event-cost', '$' + event.cost_usd));
        }
        return item;
    }

    function badge(element, value, label) {
        element.className = 'rl-badge rl-v-' + value;
        element.textContent = label;
    }

    function redrawHeader(session) {
        for (const name of ['iteration', 'wave', 'task', 'agent', 'tokens', 'cost', 'activity']) {
            const element = document.querySelector('[data-live="' + name + '"]');
            if (element) {
                element.textContent = session[name];
            }
        }
        const status = document.querySelector('[data-live="status"]');
        const state = document.querySelector('[data-live="state"]');
        const interrupted = document.querySelector('[data-live="interrupted"]');
        if (status) {
            badge(status, session.status, session.status_label);
        }
        if (state) {
            badge(state, session.state, session.state_label);
        }
        if (interrupted) {
            interrupted.classList.toggle('rc-hidden', !session.interrupted);
        }
    }

    // A finished session's page still follows its ledger, but its loop no longer runs: "ended".
    let finished = indicator !== null && indicator.classList.contains('rc-ended');

    function live(on) {
        if (indicator) {
            indicator.classList.toggle('rc-on', on && !finished);
            indicator.classList.toggle('rc-ended', on && finished);
            indicator.classList.toggle('rc-off', !on);
            indicator.textContent = !on ? 'offline: retrying' : finished ? 'ended' : 'live';
        }
    }

    async function poll() {
        if (document.hidden) {
            return;
        }
        const url = list.dataset.feedUrl + '&after=' + encodeURIComponent(list.dataset.after);
        try {
            const response = await fetch(url, {headers: {'Accept': 'application/json'}, credentials: 'same-origin'});
            if (!response.ok) {
                live(false);
                return;
            }
            const answer = await response.json();
            const empty = list.querySelector('.rc-event-empty');
            if (answer.events.length && empty) {
                empty.remove();
            }
            for (const event of answer.events) {
                list.prepend(row(event));
            }
            list.dataset.after = answer.last_id;
            while (list.children.length > KEEP) {
                list.lastElementChild.remove();
            }
            redrawHeader(answer.session);
            finished = answer.session.finished;
            live(true);
            if (answer.more) {
                window.setTimeout(poll, 0);
            }
        } catch (error) {
            live(false);
        }
    }

    if (list) {
        live(true);
        window.setInterval(poll, POLL_MS);
        document.addEventListener('visibilitychange', poll);
    }
}
