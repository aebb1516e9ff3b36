// The front end of fitgpp.workbook.live.LiveChart (an anywidget). Plain JavaScript, no imports: vega-embed
// (0.9 MB bundled by vl-convert, offline) is asked of the kernel once per page and evaluated once
// for every chart. Each chart shipping and evaluating its own copy (altair's offline
// JupyterChart) made anywidget's 2-second model initialization time out on a busy machine
// ("[anywidget] Failed to initialize model."), after which anywidget drops every message to that
// model: the chart stopped following the controls.
//
// Unlike altair's JupyterChart front end, a new spec is drawn into a fresh element and put on
// screen only if no newer spec arrived meanwhile (a slow render that finishes last can no longer
// leave an old chart on screen), the previous view is finalized, and the listeners are set up
// once per model rather than once per render. The drawn view and the spec it was drawn from are
// kept on the element (`el.fitgpp`) so a test can compare the marks with the data.

// {vegaEmbed, lodashDebounce}, loaded once per page from the bundle the kernel sends. The
// first chart asks; a chart still waiting after 10 s asks again (the first asker may have been
// closed before the kernel, busy with a long cell, could answer); the first answer is used.
function libraries(model) {
    const g = globalThis.fitgppVega ??= (() => {
        let resolve, reject;
        const promise = new Promise((yes, no) => { resolve = yes; reject = no; });
        return {promise, resolve, reject, asked: false, taken: false};
    })();
    if (g.taken) return g.promise;
    const take = async (msg) => {
        if (!msg || msg.bundle == null) return;
        model.off("msg:custom", take);
        if (g.taken) return;
        g.taken = true;
        const url = URL.createObjectURL(new Blob([msg.bundle], {type: "text/javascript"}));
        try { g.resolve((await import(url)).default); } catch (e) { g.reject(e); }
        finally { URL.revokeObjectURL(url); }
    };
    model.on("msg:custom", take);
    if (!g.asked) {
        g.asked = true;
        model.send({want: "bundle"});
    }
    setTimeout(() => { if (!g.taken) model.send({want: "bundle"}); }, 10000);
    return g.promise;
}

function showError(el, error) {
    const p = document.createElement("pre");
    p.style.color = "red";
    p.textContent = "JavaScript Error: " + error.message;
    el.replaceChildren(p);
}

function cleanJson(data) {
    return JSON.parse(JSON.stringify(data ?? null));
}

// Report each selection of `view` to the kernel, now and when it changes.
function watchSelections(model, view, lodashDebounce) {
    const wait = model.get("debounce_wait") ?? 10;
    const initial = {};
    for (const name of Object.keys(model.get("_vl_selections") ?? {})) {
        const store = () => cleanJson(view.data(`${name}_store`) ?? []);
        const send = (_, value) => {
            const all = cleanJson(model.get("_vl_selections") ?? {});
            all[name] = {value: cleanJson(value), store: store()};
            model.set("_vl_selections", all);
            model.save_changes();
        };
        view.addSignalListener(name, lodashDebounce(send, wait, {maxWait: wait}));
        initial[name] = {value: cleanJson(view.signal(name) ?? {}), store: store()};
    }
    model.set("_vl_selections", initial);
    model.save_changes();
}

// While a live chart runs, the static copy of its panel (fitgpp.workbook.static: an HTML output kept for
// a saved notebook without a kernel) is hidden; one style rule per copy.
function hideStaticCopy(model) {
    const key = model.get("static_key");
    if (!key || !/^[0-9a-f]+$/.test(key) || document.getElementById(`fitgpp-static-${key}`)) return;
    const style = document.createElement("style");
    style.id = `fitgpp-static-${key}`;
    style.textContent = `.fitgpp-static[data-fitgpp-for="${key}"] { display: none; }`;
    document.head.appendChild(style);
}

async function render({ model, el }) {
    hideStaticCopy(model);
    model.on("change:static_key", () => hideStaticCopy(model));
    const {vegaEmbed, lodashDebounce} = await libraries(model);
    let shown = null;      // the vega-embed result on screen
    let latest = 0;        // number of the newest render asked for

    const draw = async () => {
        const mine = ++latest;
        const spec = model.get("spec");
        if (spec == null) {
            if (shown) shown.finalize();
            shown = null;
            el.replaceChildren();
            return;
        }
        const box = document.createElement("div");
        let api;
        try {
            api = await vegaEmbed(box, structuredClone(spec),
                                  structuredClone(model.get("embed_options")) ?? undefined);
        } catch (error) {
            if (mine === latest) showError(el, error);
            return;
        }
        if (mine !== latest) {   // a newer spec came while this one rendered: drop it
            api.finalize();
            return;
        }
        if (shown) shown.finalize();
        shown = api;
        el.replaceChildren(box);
        // a chart wider than the notebook (a narrow window, the file browser open) is drawn
        // smaller to fit, not cut at the right (events reach its marks as before: the SVG
        // renderer finds an item from the element clicked)
        box.style.maxWidth = "100%";
        const svg = box.querySelector("svg.marks");
        if (svg) { svg.style.maxWidth = "100%"; svg.style.height = "auto"; }
        el.fitgpp = {view: api.view, drawn: spec, spec: () => model.get("spec")};
        watchSelections(model, api.view, lodashDebounce);
    };

    model.on("change:spec", draw);
    model.on("change:embed_options", draw);
    await draw();
    return () => { if (shown) shown.finalize(); shown = null; };
}

export default { render };
