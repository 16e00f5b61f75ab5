/**
 * A template's flow as a graph: each node a box (its functions with their hooks, its actions), each
 * `transition_to` an arrow labelled with its function, the initial node marked. Laid out by dagre;
 * drawn as SVG. An arrow to a node that does not exist ends at a red "missing" box, and a node
 * with problems is outlined in red.
 *
 * When editable, a click on a box selects its node, and dragging from a box's handle (the dot
 * under it) onto another box draws a transition. The graph fits its card's width (never cut off;
 * a large flow scrolls) or is zoomed in and out.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

interface GraphFunction {
  name?: unknown;
  transition_to?: unknown;
  transfer_to_number?: unknown;
  hooks?: unknown;
}
interface GraphNode {
  node_name?: unknown;
  functions?: unknown;
  pre_actions?: unknown;
  post_actions?: unknown;
}

interface Box {
  id: string;
  title: string;
  lines: string[];
  initial: boolean;
  missing: boolean;
  problems: number;
  width: number;
  height: number;
  x: number;
  y: number;
}
interface Arrow {
  from: string;
  to: string;
  label: string;
  points: { x: number; y: number }[];
  broken: boolean;
}

const LINE = 17;
const PAD = 10;
const CHAR = 7.2;

const text = (v: unknown) => (typeof v === 'string' ? v : '');
const arr = <T,>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

function actionText(a: { type?: unknown; text?: unknown; outcome?: unknown; name?: unknown }): string {
  if (a.type === 'tts_say') return `say "${text(a.text).slice(0, 28)}${text(a.text).length > 28 ? '…' : ''}"`;
  if (a.type === 'end_conversation') return `end${a.outcome ? ` (${text(a.outcome)})` : ''}`;
  if (a.type === 'function') return `run ${text(a.name)}()`;
  return String(a.type ?? '?');
}

/** Nodes and arrows of a flow (any JSON: an invalid flow draws what it can). */
export function graphOf(flow: unknown, problemsByNode: Map<string, number>): { boxes: Omit<Box, 'x' | 'y'>[]; arrows: Omit<Arrow, 'points'>[] } {
  const f = (flow ?? {}) as { initial_node?: unknown; nodes?: unknown };
  const nodes = arr<GraphNode>(f.nodes);
  const names = new Set(nodes.map((n) => text(n.node_name)).filter(Boolean));
  const boxes: Omit<Box, 'x' | 'y'>[] = [];
  const arrows: Omit<Arrow, 'points'>[] = [];
  const missing = new Set<string>();
  nodes.forEach((n, i) => {
    const id = text(n.node_name) || `(node ${i + 1})`;
    const lines: string[] = [];
    for (const fn of arr<GraphFunction>(n.functions)) {
      const hooks = arr<{ name?: unknown }>(fn.hooks).map((h) => text(h.name));
      lines.push(`ƒ ${text(fn.name)}()${hooks.length ? ` ⇢ ${hooks.join(', ')}` : ''}${fn.transfer_to_number ? ' ☎ transfer' : ''}`);
      const to = text(fn.transition_to);
      if (to) {
        arrows.push({ from: id, to, label: text(fn.name), broken: !names.has(to) });
        if (!names.has(to)) missing.add(to);
      }
    }
    for (const a of arr<{ type?: unknown }>(n.pre_actions)) lines.push(`▸ ${actionText(a)}`);
    for (const a of arr<{ type?: unknown }>(n.post_actions)) lines.push(`◂ ${actionText(a)}`);
    const title = `${text(f.initial_node) === id ? '▶ ' : ''}${id}`;
    const width = Math.max(150, Math.min(300, Math.max(title.length * 8.2, ...lines.map((l) => l.length * CHAR)) + PAD * 2));
    boxes.push({ id, title, lines, initial: text(f.initial_node) === id, missing: false, problems: problemsByNode.get(id) ?? 0, width, height: PAD * 2 + LINE * (1 + lines.length) + (lines.length ? 4 : 0) });
  });
  for (const id of missing) boxes.push({ id: `missing:${id}`, title: `missing: ${id}`, lines: ['no node has this name'], initial: false, missing: true, problems: 1, width: Math.min(300, Math.max('no node has this name'.length * CHAR, (id.length + 9) * 8.2) + PAD * 2), height: PAD * 2 + LINE * 2 + 4 });
  return { boxes, arrows: arrows.map((a) => (a.broken ? { ...a, to: `missing:${a.to}` } : a)) };
}

interface Drag {
  from: string;
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}

const ZOOMS = [0.5, 0.75, 1, 1.25, 1.5];

export function FlowGraph({
  flow,
  problemsByNode,
  selected,
  onSelect,
  onConnect,
}: {
  flow: unknown;
  problemsByNode: Map<string, number>;
  /** The selected node's name. */
  selected?: string | undefined;
  onSelect?: (node: string) => void;
  /** A transition drawn from one node to another; without it the graph cannot be drawn on. */
  onConnect?: (from: string, to: string) => void;
}) {
  const shape = useMemo(() => graphOf(flow, problemsByNode), [flow, problemsByNode]);
  const [laid, setLaid] = useState<{ boxes: Box[]; arrows: Arrow[]; width: number; height: number }>();
  const [zoom, setZoom] = useState<number | 'fit'>('fit');
  const [room, setRoom] = useState(0);
  const [drag, setDrag] = useState<Drag>();
  const frame = useRef<HTMLDivElement>(null);
  const svg = useRef<SVGSVGElement>(null);
  useEffect(() => {
    let stale = false;
    void import('@dagrejs/dagre').then(({ default: dagre }) => {
      if (stale) return;
      const g = new dagre.graphlib.Graph({ multigraph: true });
      g.setGraph({ rankdir: 'TB', nodesep: 40, ranksep: 60, marginx: 16, marginy: 16 });
      g.setDefaultEdgeLabel(() => ({}));
      for (const b of shape.boxes) g.setNode(b.id, { width: b.width, height: b.height + (onConnect ? 10 : 0) });
      shape.arrows.forEach((a, i) => g.setEdge(a.from, a.to, { width: a.label.length * CHAR, height: 14, labelpos: 'c' }, `e${i}`));
      dagre.layout(g);
      const boxes = shape.boxes.map((b) => {
        const n = g.node(b.id);
        return { ...b, x: n.x - b.width / 2, y: n.y - n.height / 2 };
      });
      const arrows = shape.arrows.map((a, i) => ({ ...a, points: (g.edge({ v: a.from, w: a.to, name: `e${i}` }) as { points: { x: number; y: number }[] }).points }));
      const graph = g.graph();
      setLaid({ boxes, arrows, width: Math.max(graph.width ?? 0, 200), height: Math.max(graph.height ?? 0, 80) });
    });
    return () => {
      stale = true;
    };
  }, [shape]);
  // The card's inner width, so that "fit" scales the drawing to it.
  useEffect(() => {
    const el = frame.current;
    if (!el) return;
    const observer = new ResizeObserver(() => setRoom(el.clientWidth));
    observer.observe(el);
    setRoom(el.clientWidth);
    return () => observer.disconnect();
  }, [!!laid]);

  if (!laid) return <div class="flow-graph" aria-busy="true" />;
  if (laid.boxes.length === 0) return <div class="flow-graph empty">The flow has no nodes yet{onConnect ? ': add one.' : '.'}</div>;
  const scale = zoom === 'fit' ? Math.min(1, room > 0 ? (room - 2) / laid.width : 1) : zoom;

  /** A pointer's place in the drawing's own coordinates. */
  const local = (e: PointerEvent) => {
    const m = svg.current?.getScreenCTM();
    if (!m) return { x: 0, y: 0 };
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse());
    return { x: p.x, y: p.y };
  };
  const startDrag = (e: PointerEvent, b: Box) => {
    e.stopPropagation();
    e.preventDefault();
    svg.current?.setPointerCapture(e.pointerId);
    const x1 = b.x + b.width / 2;
    const y1 = b.y + b.height + 5;
    setDrag({ from: b.id, x1, y1, x2: x1, y2: y1 });
  };
  const moveDrag = (e: PointerEvent) => {
    if (!drag) return;
    const p = local(e);
    setDrag({ ...drag, x2: p.x, y2: p.y });
  };
  const endDrag = (e: PointerEvent) => {
    if (!drag) return;
    setDrag(undefined);
    const target = (document.elementFromPoint(e.clientX, e.clientY) as Element | null)?.closest('g.box')?.getAttribute('data-node');
    if (target && target !== drag.from && !target.startsWith('missing:')) onConnect?.(drag.from, target);
  };
  const zoomIndex = ZOOMS.findIndex((z) => z >= scale - 0.001);

  return (
    <div class="flow-graph-frame">
      <div class="graph-zoom" role="group" aria-label="Zoom">
        <button type="button" class="small" aria-label="Zoom out" disabled={scale <= ZOOMS[0]!} onClick={() => setZoom(ZOOMS[Math.max(0, (zoomIndex < 0 ? ZOOMS.length : zoomIndex) - 1)]!)}>
          −
        </button>
        <button type="button" class={`small ${zoom === 'fit' ? 'pressed' : ''}`} onClick={() => setZoom('fit')} title="Fit the width of the card">
          {zoom === 'fit' ? `Fit · ${Math.round(scale * 100)}%` : `${Math.round(scale * 100)}%`}
        </button>
        <button type="button" class="small" aria-label="Zoom in" disabled={scale >= ZOOMS[ZOOMS.length - 1]!} onClick={() => setZoom(ZOOMS.find((z) => z > scale + 0.001) ?? ZOOMS[ZOOMS.length - 1]!)}>
          +
        </button>
      </div>
      <div class={`flow-graph ${onConnect ? 'editable' : ''}`} ref={frame}>
        <svg
          ref={svg}
          viewBox={`0 0 ${laid.width} ${laid.height}`}
          width={Math.round(laid.width * scale)}
          height={Math.round(laid.height * scale)}
          role="img"
          aria-label="Flow graph"
          onPointerMove={moveDrag}
          onPointerUp={endDrag}
          onPointerCancel={() => setDrag(undefined)}
        >
          <defs>
            <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
              <path d="M 0 0 L 10 5 L 0 10 z" fill="#5b6578" />
            </marker>
            <marker id="arrow-bad" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
              <path d="M 0 0 L 10 5 L 0 10 z" fill="#b42318" />
            </marker>
          </defs>
          {laid.arrows.map((a, i) => {
            const d = a.points.map((p, j) => `${j === 0 ? 'M' : 'L'} ${p.x} ${p.y}`).join(' ');
            const mid = a.points[Math.floor(a.points.length / 2)]!;
            return (
              <g key={i} class={`edge ${a.broken ? 'edge-broken' : ''}`} data-from={a.from} data-to={a.to.replace(/^missing:/, '')} data-function={a.label}>
                <path d={d} marker-end={`url(#${a.broken ? 'arrow-bad' : 'arrow'})`} />
                <text x={mid.x + 4} y={mid.y - 4} class="edge-label">
                  {a.label}
                </text>
              </g>
            );
          })}
          {laid.boxes.map((b) => (
            <g
              key={b.id}
              class={`box ${b.initial ? 'box-initial' : ''} ${b.missing ? 'box-missing' : ''} ${b.problems ? 'box-problem' : ''} ${selected === b.id ? 'box-selected' : ''}`}
              data-node={b.id}
              transform={`translate(${b.x} ${b.y})`}
              tabIndex={onSelect && !b.missing ? 0 : undefined}
              role={onSelect && !b.missing ? 'button' : undefined}
              aria-label={onSelect && !b.missing ? `Node ${b.id}` : undefined}
              onClick={onSelect && !b.missing ? () => onSelect(b.id) : undefined}
              onKeyDown={onSelect && !b.missing ? (e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), onSelect(b.id)) : undefined}
            >
              <rect width={b.width} height={b.height} rx="8" />
              <text x={PAD} y={PAD + 12} class="box-title">
                {b.title}
                {b.problems > 0 && !b.missing ? ` ⚠ ${b.problems}` : ''}
              </text>
              {b.lines.map((l, i) => (
                <text key={i} x={PAD} y={PAD + 12 + LINE * (i + 1) + 4} class="box-line">
                  {l.length > 42 ? `${l.slice(0, 41)}…` : l}
                </text>
              ))}
              {onConnect && !b.missing && (
                <circle class="connector" data-node={b.id} cx={b.width / 2} cy={b.height + 5} r="6" onPointerDown={(e) => startDrag(e, b)} onClick={(e) => e.stopPropagation()}>
                  <title>Drag onto another node to add a transition</title>
                </circle>
              )}
            </g>
          ))}
          {drag && <line class="drag-line" x1={drag.x1} y1={drag.y1} x2={drag.x2} y2={drag.y2} marker-end="url(#arrow)" />}
        </svg>
      </div>
    </div>
  );
}
