/**
 * A chart drawn by Apache ECharts, loaded on first use (its own chunk, only the chart types and
 * parts the dashboard draws). Canvas rendering: nothing inline that the page's CSP would refuse.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

type ECharts = typeof import('./echarts.js');
let loading: Promise<ECharts> | undefined;
export const loadECharts = () => (loading ??= import('./echarts.js'));

export interface ChartProps {
  /** An ECharts option object. */
  option: Record<string, unknown>;
  height?: number;
  label: string;
  id?: string;
}

export function Chart({ option, height = 280, label, id }: ChartProps) {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<{ setOption(o: unknown, notMerge?: boolean): void; resize(): void; dispose(): void } | undefined>(undefined);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let disposed = false;
    let observer: ResizeObserver | undefined;
    void loadECharts().then((ec) => {
      if (disposed || !el.current) return;
      chart.current = ec.init(el.current);
      observer = new ResizeObserver(() => chart.current?.resize());
      observer.observe(el.current);
      setReady(true);
    });
    return () => {
      disposed = true;
      observer?.disconnect();
      chart.current?.dispose();
    };
  }, []);
  useEffect(() => {
    if (ready) chart.current?.setOption({ animation: false, ...option }, true);
  }, [ready, option]);
  return <div ref={el} class="chart" role="img" aria-label={label} id={id} data-ready={ready ? 'true' : 'false'} style={{ height: `${height}px` }} />;
}

export const PALETTE = ['#2457c5', '#16a085', '#e67e22', '#8e44ad', '#c0392b', '#7f8c8d', '#2c3e50', '#d4ac0d', '#1abc9c', '#e84393'];
