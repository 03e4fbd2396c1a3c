import Mustache

/// The console's pages as mustache templates (HTML-escaped by default), and its stylesheet.
/// Shipped in the binary: the console needs no files beside it and nothing from the network.
enum ConsoleTemplates {
    static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        for (name, text) in [
            ("header", header), ("footer", footer), ("signin", signIn), ("queue", queue), ("item", item),
            ("log", log), ("message", message),
        ] {
            try library.register(text, named: name)
        }
        return library
    }

    static let header = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Scavenger moderation</title>
        <link rel="stylesheet" href="/mod/console.css">
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
        <span class="brand">Scavenger moderation</span>
        {{#moderator}}
        <nav aria-label="Console">
        <a href="/mod/"{{#onQueue}} aria-current="page"{{/onQueue}}>Queue</a>
        <a href="/mod/log"{{#onLog}} aria-current="page"{{/onLog}}>Audit log</a>
        </nav>
        <form method="post" action="/mod/signout" class="signout">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <span>Signed in as <strong>{{moderator}}</strong> ({{role}})</span>
        <button type="submit">Sign out</button>
        </form>
        {{/moderator}}
        </header>
        <main id="main">
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#problem}}<p class="problem" role="alert">{{problem}}</p>{{/problem}}
        """

    static let footer = """
        </main>
        </body>
        </html>
        """

    static let signIn = """
        {{> header}}
        <h1>Sign in</h1>
        <p>The console is for moderators and admins. Sign in with your Scavenger account.</p>
        <form method="post" action="/mod/signin" class="card narrow">
        <input type="hidden" name="csrf" value="{{signInCSRF}}">
        <p><label for="login">Name or email</label>
        <input id="login" name="login" autocomplete="username" required value="{{login}}"></p>
        <p><label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required></p>
        <p><button type="submit">Sign in</button></p>
        </form>
        {{> footer}}
        """

    static let message = """
        {{> header}}
        <h1>{{title}}</h1>
        <p>{{text}}</p>
        <p><a href="/mod/">Back to the console</a></p>
        {{> footer}}
        """

    static let queue = """
        {{> header}}
        <h1>Report queue</h1>
        <form method="get" action="/mod/" class="filters" aria-label="Filter the queue">
        <label for="status">Status</label>
        <select id="status" name="status">
        {{#statuses}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/statuses}}
        </select>
        <label for="reason">Reason</label>
        <select id="reason" name="reason">
        {{#reasons}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/reasons}}
        </select>
        <button type="submit">Show</button>
        </form>
        {{^items}}<p class="empty">Nothing here: no items match.</p>{{/items}}
        <ol class="items">
        {{#items}}
        <li class="card item" data-item="{{item}}">
        <div class="evidence">
        {{#photoURL}}<img src="{{photoURL}}" alt="Reported photo: {{text}}" class="thumb">{{/photoURL}}
        <div>
        <h2><a href="/mod/item/{{item}}">{{kind}} {{item}}</a></h2>
        <blockquote>{{text}}</blockquote>
        <p class="meta">by <strong>{{author}}</strong>, posted {{created}}</p>
        </div>
        </div>
        <p class="badges">
        <span class="badge status-{{status}}">{{status}}</span>
        {{#hidden}}<span class="badge hidden">hidden from feeds</span>{{/hidden}}
        {{#claimedBy}}<span class="badge">claimed by {{claimedBy}}</span>{{/claimedBy}}
        {{#resolution}}<span class="badge">{{resolution}}</span>{{/resolution}}
        </p>
        <p><strong>{{reports}}</strong> report{{^single}}s{{/single}}:
        {{#reasons}}<span class="reason">{{reason}} × {{count}}</span> {{/reasons}}</p>
        <p class="ages">Reporters' account ages: {{#ages}}<span class="age{{#fresh}} fresh{{/fresh}}">{{text}}</span> {{/ages}}
        {{#freshReporters}}<strong class="warn">{{freshReporters}} under a day old</strong>{{/freshReporters}}</p>
        </li>
        {{/items}}
        </ol>
        <nav class="pager" aria-label="Pages">
        {{#previous}}<a href="{{previous}}" rel="prev">Previous page</a>{{/previous}}
        {{#next}}<a href="{{next}}" rel="next">Next page</a>{{/next}}
        </nav>
        {{> footer}}
        """

    static let item = """
        {{> header}}
        <p><a href="/mod/">← Queue</a></p>
        <h1>Reported {{kind}} <code>{{item}}</code></h1>
        <div class="columns">
        <section class="card" aria-labelledby="evidence">
        <h2 id="evidence">Evidence</h2>
        {{#photoURL}}<img src="{{photoURL}}" alt="Reported photo: {{text}}" class="photo">{{/photoURL}}
        {{#photoGone}}<p class="meta">A photo was reported; its copy was dropped when the item was resolved.</p>{{/photoGone}}
        <blockquote>{{text}}</blockquote>
        <dl>
        <dt>Author</dt><dd>{{author}}</dd>
        <dt>Posted</dt><dd>{{created}}</dd>
        {{#expires}}<dt>Expires</dt><dd>{{expires}}</dd>{{/expires}}
        {{#pin}}<dt>Under pin</dt><dd><code>{{pin}}</code></dd>{{/pin}}
        {{#hunt}}<dt>In hunt</dt><dd><code>{{hunt}}</code></dd>{{/hunt}}
        <dt>Where</dt><dd>{{lat}}, {{lon}}</dd>
        <dt>Status</dt><dd><span class="badge status-{{status}}">{{status}}</span>
        {{#hidden}}<span class="badge hidden">hidden from feeds</span>{{/hidden}}
        {{#claimedBy}}<span class="badge">claimed by {{claimedBy}}</span>{{/claimedBy}}
        {{#resolution}}<span class="badge">{{resolution}}</span>{{/resolution}}</dd>
        <dt>Reported</dt><dd>first {{firstReported}}, last {{lastReported}}</dd>
        </dl>
        </section>
        <section class="card" aria-labelledby="decide">
        <h2 id="decide">Decide</h2>
        {{#canClaim}}
        <form method="post" action="/mod/item/{{item}}/claim">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Claim this item</button>
        </form>
        {{/canClaim}}
        {{#heldByOther}}<p class="problem" role="note">{{claimedBy}} holds this item. You can act on it when they release it or their claim lapses{{#isAdmin}}; as an admin you may resolve it anyway{{/isAdmin}}.</p>{{/heldByOther}}
        {{#canResolve}}
        <form method="post" action="/mod/item/{{item}}/resolve" class="resolve">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <fieldset>
        <legend>Decision</legend>
        <p><input type="radio" id="d-dismiss" name="decision" value="dismiss" required>
        <label for="d-dismiss">Dismiss: the reports were wrong; show it again</label></p>
        <p><input type="radio" id="d-remove" name="decision" value="remove">
        <label for="d-remove">Remove: delete it from every feed for good</label></p>
        <p><input type="radio" id="d-ban" name="decision" value="ban">
        <label for="d-ban">Ban: remove it and ban {{author}}</label></p>
        </fieldset>
        <p><label for="duration">Ban length</label>
        <select id="duration" name="duration">
        {{#durations}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/durations}}
        </select></p>
        <p><label for="note">Note for the audit log</label>
        <textarea id="note" name="note" rows="3" maxlength="500"></textarea></p>
        <p><button type="submit">Resolve</button></p>
        </form>
        {{/canResolve}}
        {{#holds}}
        <form method="post" action="/mod/item/{{item}}/release">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="secondary">Release my claim</button>
        </form>
        {{/holds}}
        {{#resolved}}<p>This item is resolved ({{resolution}}).</p>{{/resolved}}
        {{#own}}<p class="problem" role="note">This is your own content: another moderator must decide it.</p>{{/own}}
        </section>
        </div>
        <section class="card" aria-labelledby="reports">
        <h2 id="reports">Reports</h2>
        <p>{{#reasons}}<span class="reason">{{reason}} × {{count}}</span> {{/reasons}}
        {{#freshReporters}}<strong class="warn">{{freshReporters}} of {{reportCount}} reporters' accounts were under a day old</strong>{{/freshReporters}}</p>
        <div class="scroll"><table>
        <thead><tr><th scope="col">Reporter</th><th scope="col">Account age then</th><th scope="col">Reason</th><th scope="col">Note</th><th scope="col">When</th></tr></thead>
        <tbody>
        {{#reports}}<tr><td>{{reporter}}</td><td class="{{#fresh}}fresh{{/fresh}}">{{age}}</td><td>{{reason}}</td><td>{{note}}</td><td>{{at}}</td></tr>{{/reports}}
        </tbody>
        </table></div>
        </section>
        <section class="card" aria-labelledby="where">
        <h2 id="where">Where</h2>
        {{{map}}}
        <p class="meta">The reported place is the red mark; other live pins within {{mapRadius}} are grey.
        <a href="{{osm}}">Open {{lat}}, {{lon}} on OpenStreetMap</a> (needs the internet).</p>
        </section>
        {{#authorHistory}}
        <section class="card" aria-labelledby="author">
        <h2 id="author">The author: {{name}}</h2>
        <p>{{role}}, joined {{joined}}. {{#ban}}<strong class="warn">Banned until {{ban}}.</strong>{{/ban}}{{^ban}}Not banned.{{/ban}}</p>
        <h3>Recent pins</h3>
        {{^pins}}<p class="empty">None.</p>{{/pins}}
        <ul>{{#pins}}<li><code>{{id}}</code> {{created}}{{#hidden}} <span class="badge hidden">hidden</span>{{/hidden}}: {{text}}</li>{{/pins}}</ul>
        <h3>Recent replies</h3>
        {{^replies}}<p class="empty">None.</p>{{/replies}}
        <ul>{{#replies}}<li><code>{{id}}</code> {{created}}{{#hidden}} <span class="badge hidden">hidden</span>{{/hidden}}: {{text}}</li>{{/replies}}</ul>
        <h3>Other reported content</h3>
        {{^reportedItems}}<p class="empty">None.</p>{{/reportedItems}}
        <ul>{{#reportedItems}}<li><a href="/mod/item/{{item}}">{{item}}</a>: {{reports}} reports, {{status}}{{#resolution}} ({{resolution}}){{/resolution}}</li>{{/reportedItems}}</ul>
        <h3>Moderation of this account</h3>
        {{^actions}}<p class="empty">None.</p>{{/actions}}
        <ul>{{#actions}}<li>{{at}}: {{moderator}} {{action}}{{#note}}: “{{note}}”{{/note}}</li>{{/actions}}</ul>
        </section>
        {{/authorHistory}}
        {{> footer}}
        """

    static let log = """
        {{> header}}
        <h1>Audit log</h1>
        <p>Every moderator action, newest first.</p>
        {{^entries}}<p class="empty">No entries.</p>{{/entries}}
        <div class="scroll"><table class="log">
        <thead><tr><th scope="col">When</th><th scope="col">Moderator</th><th scope="col">Action</th><th scope="col">Item</th><th scope="col">User</th><th scope="col">Note</th></tr></thead>
        <tbody>
        {{#entries}}<tr><td>{{at}}</td><td>{{moderator}}</td><td>{{action}}</td><td>{{#item}}<a href="/mod/item/{{item}}">{{item}}</a>{{/item}}</td><td>{{user}}</td><td>{{note}}</td></tr>{{/entries}}
        </tbody>
        </table></div>
        <nav class="pager" aria-label="Pages">
        {{#newest}}<a href="/mod/log">Newest</a>{{/newest}}
        {{#next}}<a href="{{next}}" rel="next">Older entries</a>{{/next}}
        </nav>
        {{> footer}}
        """

    /// Dark text on light ground (contrast well above 4.5:1), visible focus, one column on a phone.
    static let stylesheet = """
        :root { color-scheme: light; --ink: #1a1a1a; --muted: #4a4a4a; --line: #c8c8c8; --accent: #0b5cad; --warn: #a30000; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.45 system-ui, sans-serif; color: var(--ink); background: #f4f4f2; }
        .skip { position: absolute; left: -999px; }
        .skip:focus { left: 8px; top: 8px; background: #fff; padding: 8px; z-index: 2; }
        header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 10px 16px; background: #fff; border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; }
        nav a { margin-right: 12px; }
        nav a[aria-current] { font-weight: 700; text-decoration: none; }
        .signout { margin-left: auto; display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
        main { max-width: 1100px; margin: 0 auto; padding: 16px; }
        a { color: var(--accent); }
        :focus-visible { outline: 3px solid #f0a000; outline-offset: 2px; }
        h1 { font-size: 1.5rem; margin: 8px 0 16px; }
        h2 { font-size: 1.15rem; margin: 0 0 8px; }
        h3 { font-size: 1rem; margin: 14px 0 4px; }
        .card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 14px; margin-bottom: 14px; }
        .narrow { max-width: 420px; }
        .items { list-style: none; padding: 0; margin: 0; }
        .evidence { display: flex; gap: 12px; align-items: flex-start; }
        .thumb { width: 120px; height: 120px; object-fit: cover; border-radius: 4px; border: 1px solid var(--line); }
        .photo { width: min(100%, 420px); height: auto; border-radius: 4px; border: 1px solid var(--line); }
        blockquote { margin: 6px 0; padding: 6px 10px; border-left: 4px solid var(--line); background: #fafafa; white-space: pre-wrap; overflow-wrap: anywhere; }
        .meta { color: var(--muted); font-size: 0.9rem; }
        .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; border: 1px solid var(--line); font-size: 0.85rem; background: #eef; }
        .badge.hidden { background: #fde8e8; border-color: #e0a0a0; }
        .status-open { background: #e6f4ea; }
        .status-claimed { background: #fff4d6; }
        .status-resolved { background: #e8e8e8; }
        .reason { display: inline-block; margin-right: 6px; }
        .fresh, .warn { color: var(--warn); font-weight: 600; }
        .notice { background: #e6f4ea; border: 1px solid #8fc79f; padding: 8px 12px; border-radius: 4px; }
        .problem { background: #fde8e8; border: 1px solid #e0a0a0; padding: 8px 12px; border-radius: 4px; }
        .empty { color: var(--muted); }
        .columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 14px; }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 8px 0; }
        dt { font-weight: 600; }
        dd { margin: 0; overflow-wrap: anywhere; }
        label { font-weight: 600; }
        input, select, textarea, button { font: inherit; }
        input:not([type=radio]), select, textarea { width: 100%; max-width: 420px; padding: 6px; border: 1px solid #767676; border-radius: 4px; }
        .filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 14px; }
        .filters select { width: auto; }
        fieldset { border: 1px solid var(--line); border-radius: 4px; }
        fieldset p { margin: 4px 0; }
        fieldset label { font-weight: 400; }
        button { padding: 7px 14px; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
        button.secondary { background: #fff; color: var(--accent); }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
        .pager { display: flex; gap: 16px; margin: 12px 0; }
        svg.map { width: 100%; max-width: 420px; height: auto; background: #eef2f5; border: 1px solid var(--line); border-radius: 4px; }
        @media (max-width: 600px) { .evidence { flex-direction: column; } .thumb { width: 100%; height: auto; } }
        """
}
