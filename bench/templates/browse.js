/* glyphbench image browser: every read image of a report, from the static report folder.
 *
 * browse/index.js sets window.GLYPHBENCH_BROWSE: per image (in report order) its model,
 * prompt, run, slice labels and scores as typed arrays, so filters, counts and sorting run
 * over every image at once. Texts live in small script files (browse/rows/NNNNN.js,
 * browse/prompts/NNNNN.js) that call glyphbenchBrowse.take(kind, number, data); a page
 * loads only the files of the rows it shows (a search loads every prompt file). Script
 * files, not fetch(): browsers refuse fetch() of file:// URLs. Images load from the run
 * folder, lazily, only for the rows on screen. The filters live in the URL's #fragment,
 * so a view can be bookmarked or shared. Plain JavaScript, nothing fetched from the net.
 */
(function () {
  "use strict";

  var DATA = window.GLYPHBENCH_BROWSE;
  var $ = function (id) { return document.getElementById(id); };
  var RESERVED = ["metric", "min", "max", "q", "sort", "page", "size", "open"];

  // ------------------------------------------------------------------ data

  function decode(entry) {
    var text = atob(entry.data);
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    switch (entry.type) {
      case "|u1": return bytes;
      case "<u2": return new Uint16Array(bytes.buffer);
      case "<u4": return new Uint32Array(bytes.buffer);
      case "<f4": return new Float32Array(bytes.buffer);
      default: throw new Error("unknown array type " + entry.type);
    }
  }

  var N = DATA.n;
  var modelCodes = decode(DATA.arrays.model);
  var promptCodes = decode(DATA.arrays.prompt);
  var runCodes = decode(DATA.arrays.run);
  var seedCodes = decode(DATA.arrays["key:seed"]);
  var sampleCodes = decode(DATA.arrays["key:sample_index"]);
  // Facets: menus whose counts follow the other filters (model first, then the slices).
  var facets = [{ column: "model", labels: DATA.models, codes: modelCodes }].concat(
    DATA.slices.map(function (s) {
      return { column: s.column, labels: s.labels, codes: decode(DATA.arrays["slice:" + s.column]) };
    })
  );
  var metrics = DATA.metrics.map(function (m) {
    return Object.assign({ values: decode(DATA.arrays["metric:" + m.name]) }, m);
  });
  var metricByName = {};
  metrics.forEach(function (m) { metricByName[m.name] = m; });

  var store = { rows: new Map(), prompts: new Map() };
  var waiting = new Map();

  window.glyphbenchBrowse = {
    take: function (kind, number, data) {
      store[kind].set(number, data);
      var entry = waiting.get(kind + "/" + number);
      if (entry) { waiting.delete(kind + "/" + number); entry.resolve(); }
    },
    openMs: null,
  };

  function load(kind, number) {
    if (store[kind].has(number)) return Promise.resolve();
    var key = kind + "/" + number;
    if (waiting.has(key)) return waiting.get(key).promise;
    var entry = {};
    entry.promise = new Promise(function (resolve, reject) {
      entry.resolve = resolve;
      entry.reject = reject;
    });
    waiting.set(key, entry);
    var script = document.createElement("script");
    script.src = "browse/" + kind + "/" + String(number).padStart(5, "0") + ".js";
    script.onload = function () { script.remove(); };
    script.onerror = function () {
      script.remove();
      waiting.delete(key);
      entry.reject(new Error("cannot load " + script.src + " (is the report folder complete?)"));
    };
    document.head.appendChild(script);
    return entry.promise;
  }

  function loadFor(positions) {
    var rowFiles = new Set(), promptFiles = new Set();
    positions.forEach(function (p) {
      rowFiles.add(Math.floor(p / DATA.rows_per_file));
      promptFiles.add(Math.floor(promptCodes[p] / DATA.prompts_per_file));
    });
    var jobs = [];
    rowFiles.forEach(function (k) { jobs.push(load("rows", k)); });
    promptFiles.forEach(function (k) { jobs.push(load("prompts", k)); });
    return Promise.all(jobs);
  }

  function row(p) {
    var part = store.rows.get(Math.floor(p / DATA.rows_per_file));
    var at = p % DATA.rows_per_file;
    var code = promptCodes[p];
    var prompts = store.prompts.get(Math.floor(code / DATA.prompts_per_file));
    var pat = code % DATA.prompts_per_file;
    var run = DATA.runs[runCodes[p]];
    var image = part.image[at];
    return {
      position: p,
      model: DATA.models[modelCodes[p]],
      promptId: prompts.id[pat],
      prompt: prompts.prompt[pat],
      text: prompts.text[pat],
      reading: part.ocr[at],
      error: part.error[at],
      seed: DATA.keys.seed[seedCodes[p]],
      sample: DATA.keys.sample_index[sampleCodes[p]],
      run: run.name,
      image: image && run.base !== null ? run.base + image : "",
      imagePath: image,
    };
  }

  // ------------------------------------------------------------------ state

  var state = { facets: {}, metric: metrics.length ? metrics[0].name : "", min: "", max: "",
                q: "", sort: "", page: 0, size: 50, open: null };
  var matches = new Uint32Array(0);
  var searchMatch = null;   // per prompt: 1 when it holds the search text (null: no search)
  var searchFor = "";
  var renderToken = 0;
  var renders = 0;          // pages shown so far (tests wait for the next one)

  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    state.facets = {};
    facets.forEach(function (f, i) {
      var label = params.get(f.column);
      var code = label === null ? -1 : f.labels.indexOf(label);
      if (code >= 0) state.facets[i] = code;
    });
    if (params.get("metric") && metricByName[params.get("metric")]) state.metric = params.get("metric");
    state.min = params.get("min") || "";
    state.max = params.get("max") || "";
    state.q = params.get("q") || "";
    state.sort = params.get("sort") || "";
    state.size = [25, 50, 100, 200].indexOf(Number(params.get("size"))) >= 0 ? Number(params.get("size")) : 50;
    state.page = Math.max(0, (parseInt(params.get("page"), 10) || 1) - 1);
    var open = parseInt(params.get("open"), 10);
    state.open = open >= 0 && open < N ? open : null;
  }

  function writeHash() {
    var params = new URLSearchParams();
    Object.keys(state.facets).forEach(function (i) {
      params.set(facets[i].column, facets[i].labels[state.facets[i]]);
    });
    if (state.min !== "" || state.max !== "") params.set("metric", state.metric);
    if (state.min !== "") params.set("min", state.min);
    if (state.max !== "") params.set("max", state.max);
    if (state.q) params.set("q", state.q);
    if (state.sort) params.set("sort", state.sort);
    if (state.size !== 50) params.set("size", String(state.size));
    if (state.page) params.set("page", String(state.page + 1));
    if (state.open !== null) params.set("open", String(state.open));
    var hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }

  function showState() {
    facets.forEach(function (f, i) {
      var select = document.querySelector('select[data-slice="' + cssEscape(f.column) + '"]');
      if (select) select.value = i in state.facets ? String(state.facets[i]) : "";
    });
    $("metric").value = state.metric;
    $("score-min").value = state.min;
    $("score-max").value = state.max;
    $("search").value = state.q;
    $("sort").value = state.sort;
    $("size").value = String(state.size);
    var hidden = $("more-attributes");
    var chosen = hidden && Array.prototype.some.call(hidden.querySelectorAll("select"), function (select) {
      return select.value !== "";
    });
    if (chosen && hidden.hidden) {  // a filter the address sets is never out of sight
      hidden.hidden = false;
      $("more").setAttribute("aria-expanded", "true");
    }
  }

  function cssEscape(text) {
    return window.CSS && CSS.escape ? CSS.escape(text) : text.replace(/["\\]/g, "\\$&");
  }

  // ------------------------------------------------------------------ filtering

  function bound(text) {
    if (text === "" || text === null) return null;
    var value = Number(text);
    // Scores are stored as 32-bit floats: compare with the bound rounded the same way,
    // so a bound equal to a score keeps it (0.7 stored is 0.699999988).
    return Number.isFinite(value) ? Math.fround(value) : null;
  }

  function applyFilters() {
    var lo = bound(state.min), hi = bound(state.max);
    var scored = lo !== null || hi !== null;
    var values = scored ? metricByName[state.metric].values : null;
    var active = Object.keys(state.facets).map(Number);
    var activeCodes = active.map(function (i) { return facets[i].codes; });
    var activeWanted = active.map(function (i) { return state.facets[i]; });
    var counts = facets.map(function (f) { return new Uint32Array(f.labels.length); });
    var out = new Uint32Array(N);
    var k = 0;
    for (var p = 0; p < N; p++) {
      if (scored) {
        var v = values[p];
        if (!(v === v) || (lo !== null && v < lo) || (hi !== null && v > hi)) continue;
      }
      if (searchMatch !== null && !searchMatch[promptCodes[p]]) continue;
      var misses = 0, missed = -1;
      for (var j = 0; j < active.length; j++) {
        if (activeCodes[j][p] !== activeWanted[j]) {
          misses++;
          missed = j;
          if (misses > 1) break;
        }
      }
      if (misses === 0) {
        out[k++] = p;
        for (var f = 0; f < facets.length; f++) counts[f][facets[f].codes[p]]++;
      } else if (misses === 1) {
        counts[active[missed]][activeCodes[missed][p]]++;
      }
    }
    matches = sortMatches(out.slice(0, k));
    showCounts(counts);
  }

  function sortMatches(list) {
    if (!state.sort) return list;
    if (state.sort === "prompt") {
      return list.sort(function (a, b) { return promptCodes[a] - promptCodes[b] || a - b; });
    }
    var parts = state.sort.split(":");
    var metric = metricByName[parts[0]];
    if (!metric) return list;
    // "worst" first: ascending when higher is better; missing scores (failed rows) go last.
    var sign = (parts[1] === "best") === metric.higher ? -1 : 1;
    var values = metric.values;
    return list.sort(function (a, b) {
      var x = values[a], y = values[b];
      if (x !== x) return y !== y ? a - b : 1;
      if (y !== y) return -1;
      return sign * (x - y) || a - b;
    });
  }

  function showCounts(counts) {
    facets.forEach(function (f, i) {
      var select = document.querySelector('select[data-slice="' + cssEscape(f.column) + '"]');
      if (!select) return;
      for (var o = 1; o < select.options.length; o++) {
        var option = select.options[o];
        var code = Number(option.value);
        option.textContent = f.labels[code] + " (" + counts[i][code].toLocaleString("en") + ")";
      }
    });
  }

  // ------------------------------------------------------------------ search

  function ensureSearch() {
    var query = state.q.trim().toLowerCase();
    if (!query) { searchMatch = null; searchFor = ""; return Promise.resolve(); }
    if (query === searchFor && searchMatch !== null) return Promise.resolve();
    var files = Math.ceil(DATA.n_prompts / DATA.prompts_per_file);
    var jobs = [];
    for (var k = 0; k < files; k++) jobs.push(load("prompts", k));
    if (jobs.length && !store.prompts.has(files - 1)) status("Loading the prompts to search them…");
    return Promise.all(jobs).then(function () {
      var found = new Uint8Array(DATA.n_prompts);
      for (var k = 0; k < files; k++) {
        var part = store.prompts.get(k);
        if (!part.lower) {
          part.lower = part.prompt.map(function (text, i) {
            return (text + "\n" + part.text[i]).toLowerCase();
          });
        }
        for (var i = 0; i < part.lower.length; i++) {
          if (part.lower[i].indexOf(query) >= 0) found[k * DATA.prompts_per_file + i] = 1;
        }
      }
      searchMatch = found;
      searchFor = query;
    });
  }

  // ------------------------------------------------------------------ table

  function status(text) { $("status").textContent = text; }

  function fmt(metric, value) {
    if (!(value === value)) return "–";
    if (metric.flag) return value >= 0.5 ? "yes" : "no";
    return value.toFixed(metric.digits);
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function picture(r, large) {
    if (!r.image) {
      return element("span", "no-image", r.imagePath ? "image path not reachable from the report" : "no image");
    }
    var img = document.createElement("img");
    img.src = r.image;
    img.alt = large ? r.model + "'s image for “" + r.text + "”" : "";
    img.loading = large ? "eager" : "lazy";
    img.decoding = "async";
    img.addEventListener("error", function () {
      var missing = element("span", "no-image", "image not found: " + r.image);
      img.replaceWith(missing);
    });
    return img;
  }

  // Which characters of the expected text were read, and which read ones are not in it:
  // a longest common subsequence, case ignored (as the scores' normalisation ignores it).
  var MAX_ALIGN = 250000;

  function align(expected, reading) {
    var a = Array.from(expected), b = Array.from(reading);
    var n = a.length, m = b.length;
    if ((n + 1) * (m + 1) > MAX_ALIGN) return null;
    var lowA = a.map(function (c) { return c.toLowerCase(); });
    var lowB = b.map(function (c) { return c.toLowerCase(); });
    var table = new Uint16Array((n + 1) * (m + 1));
    for (var i = n - 1; i >= 0; i--) {
      for (var j = m - 1; j >= 0; j--) {
        table[i * (m + 1) + j] = lowA[i] === lowB[j]
          ? table[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(table[(i + 1) * (m + 1) + j], table[i * (m + 1) + j + 1]);
      }
    }
    var keptA = new Uint8Array(n), keptB = new Uint8Array(m);
    i = 0; j = 0;
    while (i < n && j < m) {
      if (lowA[i] === lowB[j]) { keptA[i++] = 1; keptB[j++] = 1; }
      else if (table[(i + 1) * (m + 1) + j] >= table[i * (m + 1) + j + 1]) i++;
      else j++;
    }
    return { expected: runs(a, keptA, "missing"), reading: runs(b, keptB, "extra"),
             same: n === m && keptA.every(function (k) { return k === 1; }) };
  }

  function runs(chars, kept, kind) {
    var out = [];
    chars.forEach(function (c, i) {
      var cls = kept[i] ? "" : kind;
      if (out.length && out[out.length - 1].cls === cls) out[out.length - 1].text += c;
      else out.push({ cls: cls, text: c });
    });
    return out;
  }

  function marked(parent, pieces) {
    pieces.forEach(function (piece) {
      parent.appendChild(piece.cls ? element("span", piece.cls, piece.text) : document.createTextNode(piece.text));
    });
    return parent;
  }

  function textCells(r) {
    var expected = element("td", "expected");
    var reading = element("td", "reading");
    var aligned = r.error || !r.reading ? null : align(r.text, r.reading);
    if (aligned) marked(expected, aligned.expected);
    else expected.textContent = r.text;
    if (r.error) {
      reading.appendChild(element("span", "err", "failed: " + r.error));
    } else if (!r.reading) {
      reading.appendChild(element("span", "muted", "(nothing read)"));
    } else if (aligned) {
      marked(reading, aligned.reading);
      if (aligned.same) reading.classList.add("same");
    } else {
      reading.textContent = r.reading;
    }
    return [expected, reading];
  }

  var manySeeds = DATA.slices.some(function (s) { return s.column === "seed"; });

  function variant(r) {  // seed and sample, where the run has several
    return (manySeeds && r.seed !== "" ? " · seed " + r.seed : "") +
      (r.sample !== "" && r.sample !== "0" ? " · sample " + r.sample : "");
  }

  function tableRow(r, index) {
    var tr = document.createElement("tr");
    tr.dataset.row = String(r.position);
    tr.dataset.key = [r.model, r.promptId, r.seed, r.sample].join("|");
    var thumb = element("td", "thumb");
    var open = element("button", "open");
    open.type = "button";
    // The name comes from the content (no aria-label), so it includes a "no image" note.
    open.appendChild(element("span", "visually-hidden", "Open image " + (index + 1) + ": " + r.model + ", prompt " + r.promptId + " "));
    open.appendChild(picture(r, false));
    open.addEventListener("click", function () { openDetail(r.position); });
    thumb.appendChild(open);
    tr.appendChild(thumb);
    var model = element("th", "model", r.model);
    model.scope = "row";
    tr.appendChild(model);
    var prompt = element("td", "prompt");
    prompt.appendChild(element("span", "pid", r.promptId + variant(r)));
    prompt.appendChild(element("span", "ptext", r.prompt));
    tr.appendChild(prompt);
    textCells(r).forEach(function (cell) { tr.appendChild(cell); });
    metrics.forEach(function (m) {
      tr.appendChild(element("td", "num", fmt(m, m.values[r.position])));
    });
    return tr;
  }

  function pageCount() { return Math.max(1, Math.ceil(matches.length / state.size)); }

  function render() {
    var token = ++renderToken;
    state.page = Math.min(state.page, pageCount() - 1);
    var start = state.page * state.size;
    var shown = Array.prototype.slice.call(matches.subarray(start, start + state.size));
    writeHash();
    showPager();
    showSortHeaders();
    return loadFor(shown).then(function () {
      if (token !== renderToken) return;
      var body = document.createElement("tbody");
      shown.forEach(function (p, i) { body.appendChild(tableRow(row(p), start + i)); });
      $("images").replaceChild(body, $("images").tBodies[0]);
      var filtered = matches.length === N ? "" : " (" + N.toLocaleString("en") + " in all)";
      status(matches.length
        ? "Images " + (start + 1).toLocaleString("en") + "–" + (start + shown.length).toLocaleString("en") +
          " of " + matches.length.toLocaleString("en") + filtered
        : "No image matches these filters" + filtered + ".");
      $("status").dataset.matches = String(matches.length);
      $("status").dataset.renders = String(++renders);
      $("status").dataset.page = String(state.page + 1);
      $("images").setAttribute("aria-busy", "false");
    }, function (error) {
      if (token === renderToken) status(error.message);
    });
  }

  function showPager() {
    var pages = pageCount();
    $("page").max = String(pages);
    $("page").value = String(state.page + 1);
    $("pages").textContent = "of " + pages.toLocaleString("en");
    $("first").disabled = $("prev").disabled = state.page === 0;
    $("next").disabled = $("last").disabled = state.page >= pages - 1;
  }

  function showSortHeaders() {
    var parts = state.sort.split(":");
    document.querySelectorAll("th[data-metric]").forEach(function (th) {
      var metric = metricByName[th.dataset.metric];
      if (parts[0] !== metric.name) { th.removeAttribute("aria-sort"); return; }
      var ascending = (parts[1] === "best") !== metric.higher;
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    });
  }

  function refresh() {
    $("images").setAttribute("aria-busy", "true");
    return ensureSearch().then(function () {
      applyFilters();
      return render();
    }, function (error) { status(error.message); });
  }

  // ------------------------------------------------------------------ detail

  var opener = null;

  function samePrompt(position) {
    var code = promptCodes[position];
    var rows = [];
    for (var p = 0; p < N; p++) if (promptCodes[p] === code) rows.push(p);
    return rows;
  }

  function definition(list, term, value, className) {
    list.appendChild(element("dt", "", term));
    var dd = element("dd", className || "", value);
    list.appendChild(dd);
    return dd;
  }

  function openDetail(position) {
    var dialog = $("detail");
    if (!dialog.open) {
      opener = document.activeElement;
      dialog.showModal();
    }
    state.open = position;
    writeHash();
    var others = samePrompt(position);
    loadFor(others.concat([position])).then(function () {
      if (state.open !== position) return;
      showDetail(position, others);
    }, function (error) { $("detail-body").textContent = error.message; });
  }

  function showDetail(position, others) {
    var r = row(position);
    var at = Array.prototype.indexOf.call(matches, position);
    $("detail-title").textContent = r.model + " · " + r.promptId +
      (at >= 0 ? " (image " + (at + 1).toLocaleString("en") + " of " + matches.length.toLocaleString("en") + ")" : "");
    $("detail-prev").disabled = at <= 0;
    $("detail-next").disabled = at < 0 || at >= matches.length - 1;
    var body = element("div", "detail-main");
    var figure = element("figure", "large");
    figure.appendChild(picture(r, true));
    if (r.image) {
      var link = element("a", "", "open the full image");
      link.href = r.image;
      var caption = element("figcaption");
      caption.appendChild(link);
      figure.appendChild(caption);
    }
    body.appendChild(figure);
    var list = element("dl", "fields");
    definition(list, "Prompt", r.prompt);
    var cells = textCells(r);
    definition(list, "Expected", "", "expected").append(...cells[0].childNodes);
    if (r.error) definition(list, "Error", r.error, "err");
    else definition(list, "Reading", "", cells[1].className).append(...cells[1].childNodes);
    var scores = definition(list, "Scores", "");
    var scoreList = element("ul", "chips");
    metrics.forEach(function (m) {
      var item = element("li", "", m.short + " " + fmt(m, m.values[position]));
      item.title = m.label;
      scoreList.appendChild(item);
    });
    scores.appendChild(scoreList);
    var attributes = definition(list, "Attributes", "");
    var chips = element("ul", "chips");
    facets.slice(1).forEach(function (f) {
      chips.appendChild(element("li", "", f.column + ": " + f.labels[f.codes[position]]));
    });
    attributes.appendChild(chips);
    var where = [DATA.runs.length > 1 ? "run " + r.run : "", r.seed !== "" ? "seed " + r.seed : "",
      r.sample !== "" ? "sample " + r.sample : "", r.imagePath];
    definition(list, "Image", where.filter(Boolean).join(" · "));
    body.appendChild(list);
    var side = element("section", "side");
    side.setAttribute("aria-labelledby", "side-title");
    var heading = element("h3", "", "The same prompt, every model (" + others.length + " image" + (others.length === 1 ? "" : "s") + ")");
    heading.id = "side-title";
    side.appendChild(heading);
    var grid = element("ul", "side-grid");
    others.forEach(function (p) { grid.appendChild(sideCard(row(p), p === position)); });
    side.appendChild(grid);
    var holder = $("detail-body");
    holder.replaceChildren(body, side);
  }

  function sideCard(r, current) {
    var item = element("li", current ? "card current" : "card");
    var button = element("button", "open");
    button.type = "button";
    button.appendChild(element("span", "visually-hidden", "Show " + r.model + "'s image" + (current ? " (shown) " : " ")));
    if (current) button.setAttribute("aria-current", "true");
    button.appendChild(picture(r, false));
    button.addEventListener("click", function () { openDetail(r.position); });
    item.appendChild(button);
    item.appendChild(element("div", "card-model", r.model + variant(r)));
    var reading = textCells(r)[1];
    item.appendChild(element("div", "card-reading " + reading.className)).append(...reading.childNodes);
    var primary = metrics[0];
    if (primary) item.appendChild(element("div", "card-score", primary.short + " " + fmt(primary, primary.values[r.position])));
    return item;
  }

  function step(delta) {
    var at = Array.prototype.indexOf.call(matches, state.open);
    var next = at + delta;
    if (at < 0 || next < 0 || next >= matches.length) return;
    var page = Math.floor(next / state.size);
    if (page !== state.page) { state.page = page; render(); }
    openDetail(matches[next]);
  }

  function closeDetail() {
    state.open = null;
    writeHash();
    if (opener && document.body.contains(opener)) opener.focus();
  }

  // ------------------------------------------------------------------ wiring

  function wire() {
    document.querySelectorAll("select[data-slice]").forEach(function (select) {
      select.addEventListener("change", function () {
        var i = facets.findIndex(function (f) { return f.column === select.dataset.slice; });
        if (select.value === "") delete state.facets[i];
        else state.facets[i] = Number(select.value);
        state.page = 0;
        refresh();
      });
    });
    var typing = null;
    function later(read) {
      return function () {
        clearTimeout(typing);
        typing = setTimeout(function () { read(); state.page = 0; refresh(); }, 250);
      };
    }
    $("metric").addEventListener("change", function () { state.metric = $("metric").value; state.page = 0; refresh(); });
    $("score-min").addEventListener("input", later(function () { state.min = $("score-min").value; }));
    $("score-max").addEventListener("input", later(function () { state.max = $("score-max").value; }));
    $("search").addEventListener("input", later(function () { state.q = $("search").value; }));
    $("sort").addEventListener("change", function () { state.sort = $("sort").value; state.page = 0; refresh(); });
    $("size").addEventListener("change", function () {
      var first = state.page * state.size;
      state.size = Number($("size").value);
      state.page = Math.floor(first / state.size);
      render();
    });
    if ($("more")) {
      $("more").addEventListener("click", function () {
        var open = $("more").getAttribute("aria-expanded") !== "true";
        $("more").setAttribute("aria-expanded", String(open));
        $("more-attributes").hidden = !open;
      });
    }
    $("reset").addEventListener("click", function () {
      state.facets = {};
      state.min = state.max = state.q = state.sort = "";
      state.page = 0;
      showState();
      refresh();
    });
    document.querySelectorAll("button.sort").forEach(function (button) {
      button.addEventListener("click", function () {
        var name = button.dataset.metric;
        state.sort = state.sort === name + ":worst" ? name + ":best" : name + ":worst";
        state.page = 0;
        showState();
        refresh();
      });
    });
    function go(page) { state.page = Math.max(0, Math.min(page, pageCount() - 1)); render(); }
    $("first").addEventListener("click", function () { go(0); });
    $("prev").addEventListener("click", function () { go(state.page - 1); });
    $("next").addEventListener("click", function () { go(state.page + 1); });
    $("last").addEventListener("click", function () { go(pageCount() - 1); });
    $("page").addEventListener("change", function () { go((parseInt($("page").value, 10) || 1) - 1); });
    $("detail-close").addEventListener("click", function () { $("detail").close(); });
    $("detail-prev").addEventListener("click", function () { step(-1); });
    $("detail-next").addEventListener("click", function () { step(1); });
    $("detail").addEventListener("close", closeDetail);
    $("detail").addEventListener("keydown", function (event) {
      if (event.target.tagName === "INPUT") return;
      if (event.key === "ArrowLeft") { event.preventDefault(); step(-1); }
      if (event.key === "ArrowRight") { event.preventDefault(); step(1); }
    });
    $("detail").addEventListener("click", function (event) {
      if (event.target === $("detail")) $("detail").close();  // a click on the backdrop
    });
    window.addEventListener("hashchange", function () {
      readHash();
      showState();
      refresh().then(showOpen);
    });
  }

  readHash();
  showState();
  wire();
  function showOpen() {
    if (state.open !== null) openDetail(state.open);
    else if ($("detail").open) $("detail").close();
  }

  refresh().then(function () {
    window.glyphbenchBrowse.openMs = performance.now();
    document.body.dataset.state = "ready";
    showOpen();
  });
})();
