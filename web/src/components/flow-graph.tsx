/**
 * A template's flow as a graph: each node a box (its functions with their hooks, its actions), each
 * `transition_to` an arrow labelled with its function, the initial node marked. Laid out by dagre;
 * drawn as SVG. An arrow to a node that does not exist ends at a red "missing" box, and a node
 * with problems is outlined in red.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';

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

export function FlowGraph({ flow, problemsByNode }: { flow: unknown; problemsByNode: Map<string, number> }) {
  const shape = useMemo(() => graphOf(flow, problemsByNode), [flow, problemsByNode]);
  const [laid, setLaid] = useState<{ boxes: Box[]; arrows: Arrow[]; width: number; height: number }>();
  useEffect(() => {
    let stale = false;
    void import('@dagrejs/dagre').then(({ default: dagre }) => {
      if (stale) return;
      const g = new dagre.graphlib.Graph({ multigraph: true });
      g.setGraph({ rankdir: 'TB', nodesep: 40, ranksep: 60, marginx: 16, marginy: 16 });
      g.setDefaultEdgeLabel(() => ({}));
      for (const b of shape.boxes) g.setNode(b.id, { width: b.width, height: b.height });
      shape.arrows.forEach((a, i) => g.setEdge(a.from, a.to, { width: a.label.length * CHAR, height: 14, labelpos: 'c' }, `e${i}`));
      dagre.layout(g);
      const boxes = shape.boxes.map((b) => {
        const n = g.node(b.id);
        return { ...b, x: n.x - b.width / 2, y: n.y - b.height / 2 };
      });
      const arrows = shape.arrows.map((a, i) => ({ ...a, points: (g.edge({ v: a.from, w: a.to, name: `e${i}` }) as { points: { x: number; y: number }[] }).points }));
      const graph = g.graph();
      setLaid({ boxes, arrows, width: Math.max(graph.width ?? 0, 200), height: Math.max(graph.height ?? 0, 80) });
    });
    return () => {
      stale = true;
    };
  }, [shape]);
  if (!laid) return <div class="flow-graph" aria-busy="true" />;
  if (laid.boxes.length === 0) return <div class="flow-graph empty">The flow has no nodes yet.</div>;
  return (
    <div class="flow-graph">
      <svg viewBox={`0 0 ${laid.width} ${laid.height}`} width={laid.width} height={laid.height} role="img" aria-label="Flow graph">
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
          <g key={b.id} class={`box ${b.initial ? 'box-initial' : ''} ${b.missing ? 'box-missing' : ''} ${b.problems ? 'box-problem' : ''}`} data-node={b.id} transform={`translate(${b.x} ${b.y})`}>
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
          </g>
        ))}
      </svg>
    </div>
  );
}
