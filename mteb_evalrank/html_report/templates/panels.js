/* The scatter panels of each intrinsic task (small multiples), drawn from their data (a
   div.panels's data-panels: correlation.figures.scatter_panels) when their <details> is first
   opened: one SVG per downstream task, x = the intrinsic score, y = the downstream score (×100),
   one point per model coloured by its family, its name in the point's tooltip. */
(() => {
  const NS = "http://www.w3.org/2000/svg", W = 240, H = 200, LEFT = 34, RIGHT = 8, TOP = 32, BOTTOM = 20;
  const add = (parent, tag, attributes, text) => {
    const e = document.createElementNS(NS, tag);
    Object.entries(attributes).forEach(([k, v]) => e.setAttribute(k, v));
    if (text !== undefined) e.textContent = text;
    return parent ? parent.appendChild(e) : e;
  };
  /* the axis of some values: their range padded by 5 %, ticks every 1, 2 or 5 × 10^k (3 to 5 of them) */
  const axis = (values, from, to) => {
    let low = values.length ? Math.min(...values) : 0, high = values.length ? Math.max(...values) : 1;
    const pad = (high - low) * 0.05 || 1;
    low -= pad; high += pad;
    const raw = (high - low) / 4, unit = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((m) => m * unit).find((s) => s >= raw);
    const ticks = [];
    for (let k = Math.ceil(low / step); k * step <= high; k++) ticks.push(k * step);
    const digits = Math.max(0, -Math.floor(Math.log10(step)));
    return { ticks, text: (t) => t.toFixed(digits), at: (v) => from + ((v - low) / (high - low)) * (to - from) };
  };
  const panel = (data, p) => {
    const both = data.xs.map((_, i) => i).filter((i) => data.xs[i] !== null && p.ys[i] !== null);
    const x = axis(both.map((i) => data.xs[i]), LEFT, W - RIGHT);
    const y = axis(both.map((i) => p.ys[i]), H - BOTTOM, TOP);
    const svg = add(null, "svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
      "aria-label": `${p.title}: ${p.rho}`, "font-family": "system-ui, sans-serif", "font-size": 9 });
    add(svg, "text", { x: W / 2, y: 11, "text-anchor": "middle", "font-weight": 600, "font-size": 10 }, p.title);
    add(svg, "text", { x: W / 2, y: 24, "text-anchor": "middle" }, p.rho);
    x.ticks.forEach((t) => {
      add(svg, "line", { x1: x.at(t), x2: x.at(t), y1: TOP, y2: H - BOTTOM, stroke: "#e4e4e4" });
      add(svg, "text", { x: x.at(t), y: H - BOTTOM + 11, "text-anchor": "middle", fill: "#555" }, x.text(t));
    });
    y.ticks.forEach((t) => {
      add(svg, "line", { x1: LEFT, x2: W - RIGHT, y1: y.at(t), y2: y.at(t), stroke: "#e4e4e4" });
      add(svg, "text", { x: LEFT - 3, y: y.at(t) + 3, "text-anchor": "end", fill: "#555" }, y.text(t));
    });
    add(svg, "rect", { x: LEFT, y: TOP, width: W - LEFT - RIGHT, height: H - TOP - BOTTOM, fill: "none", stroke: "#aaa" });
    both.forEach((i) => {
      const family = data.families[i];
      const point = add(svg, "circle", { cx: x.at(data.xs[i]).toFixed(1), cy: y.at(p.ys[i]).toFixed(1), r: 3,
        fill: data.colours[family], "fill-opacity": 0.8 });
      add(point, "title", {}, `${data.models[i]} (${family}): ${data.xs[i]}, ${p.ys[i]}`);
    });
    return svg;
  };
  const draw = (div) => {
    if (div.dataset.drawn !== undefined) return;
    const data = JSON.parse(div.dataset.panels);
    data.panels.forEach((p) => div.appendChild(panel(data, p)));
    div.dataset.drawn = "";
  };
  document.querySelectorAll("div.panels").forEach((div) => {
    const details = div.closest("details");
    if (!details || details.open) draw(div);
    if (details) details.addEventListener("toggle", () => details.open && draw(div));
  });
})();
