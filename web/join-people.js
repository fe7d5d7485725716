// join-people.js — the join page's list of people: the guest first ("you"), then everyone the events name, each with
// a voice meter, the active speaker marked, and the list's title counting them during a call.

/**
 * The list in `list`, rows made from `template` (a <template> holding one row), its title in `title`.
 * `self()`: the guest's user id; `selfName()`: the name the guest gave (empty: the user id); `inCall()`: whether
 * the page is in a call (the title counts people then).
 */
export function createPeopleList({ list, template, title, self, selfName, inCall }) {
    /** The name to show: the guest's own for themselves, a joined event's name for others, else the user id. */
    function shownName(userId, name) {
        if (userId === self()) return selfName() || userId;
        return name || userId;
    }

    /** The row of `userId` (made when `create`); a `name` given renames it. */
    function row(userId, create = true, name = null) {
        let li = [...list.children].find((el) => el.dataset.userId === userId);
        if (li && name) li.querySelector(".name").textContent = name;
        if (li || !create) return li || null;
        li = template.content.firstElementChild.cloneNode(true);
        li.dataset.userId = userId;
        li.querySelector(".name").textContent = shownName(userId, name);
        li.querySelector(".meter").setAttribute("aria-label", `${userId}'s voice level`);
        if (userId === self()) {
            li.classList.add("self");
            li.querySelector(".tag").textContent = "you";
            list.prepend(li);
        } else {
            list.append(li);
        }
        renderTitle();
        return li;
    }

    /** A meter shows `level` (0–100); someone not listed yet is added only when it is the guest. */
    function setLevel(userId, level) {
        const li = userId && row(userId, userId === self());
        if (!li) return;
        const meter = li.querySelector(".meter");
        if (meter.dataset.level === String(level)) return;
        meter.dataset.level = String(level);
        meter.setAttribute("aria-valuenow", String(level));
        meter.querySelector(".bar").style.transform = `scaleX(${level / 100})`;
    }

    function remove(userId) {
        row(userId, false)?.remove();
        renderTitle();
    }

    /** Everyone but the guest leaves the list (the call ended). */
    function removeOthers() {
        for (const li of [...list.children]) if (li.dataset.userId !== self()) li.remove();
        renderTitle();
    }

    function markSpeaker(userId) {
        for (const li of list.children) li.classList.toggle("speaking", li.dataset.userId === userId);
    }

    function renderTitle() {
        title.textContent = inCall() ? `In the room (${list.children.length})` : "Your microphone";
    }

    return { add: row, setLevel, remove, removeOthers, markSpeaker, renderTitle };
}
