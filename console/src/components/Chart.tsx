import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import type { ChartData } from '../lib/charts'
import { formatNumber } from '../lib/format'

/** A palette readable on both the light and the dark background. */
export const PALETTE = [
  '#2f7ed8',
  '#e4572e',
  '#29a36a',
  '#a05ad8',
  '#e0a100',
  '#17a2b8',
  '#d6336c',
  '#6c757d',
  '#8d6e63',
  '#20c997',
]

export type ChartProps = {
  data: ChartData
  /** x is time (Unix seconds) or a plain number (a training step). */
  xKind: 'time' | 'step'
  /** Draws running sums as filled areas (series 0 at the bottom); the legend shows each series' own value. */
  stacked?: boolean
  title: string
  testId: string
  height?: number
  /** Time zone of the time axis (IANA name); the browser's by default. */
  timeZone?: string
  /** How the legend shows an x value (Unix seconds) of a time axis, e.g. as the data's own table does; uPlot's own format by default. */
  timeLabel?: (seconds: number) => string
  yLabel?: string
}

/** A uPlot chart sized to its container; its canvas gets an accessible label and the raw data stays in the legend. */
export function Chart({
  data,
  xKind,
  stacked = false,
  title,
  testId,
  height = 280,
  timeZone,
  timeLabel,
  yLabel,
}: ChartProps) {
  const host = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = host.current
    if (el === null || data.x.length === 0) return
    // A user-timing measure from here to uPlot's first draw, `chart <testId>` (read by `npm run bench:console`).
    const started = performance.now()
    let drawn = false
    const raw = data.series
    let plotted = raw.map((s) => s.values)
    if (stacked) {
      let below: number[] | undefined
      plotted = raw.map((s) => {
        const sums = s.values.map((v, i) => (below?.[i] ?? 0) + (v ?? 0))
        below = sums
        return sums
      })
    }
    // Top of the stack first, so each lower area paints over the one above it.
    const order = stacked ? raw.map((_, i) => raw.length - 1 - i) : raw.map((_, i) => i)
    const opts: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height,
      title,
      ...(xKind === 'time' && timeZone !== undefined
        ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), timeZone) }
        : {}),
      scales: { x: { time: xKind === 'time' } },
      hooks: {
        draw: [
          () => {
            if (drawn) return
            drawn = true
            performance.measure(`chart ${testId}`, { start: started })
          },
        ],
      },
      axes: [
        {
          stroke: 'currentColor',
          grid: { stroke: 'rgba(128,128,128,0.2)' },
          ticks: { stroke: 'rgba(128,128,128,0.4)' },
        },
        {
          stroke: 'currentColor',
          grid: { stroke: 'rgba(128,128,128,0.2)' },
          ticks: { stroke: 'rgba(128,128,128,0.4)' },
          size: 70,
          ...(yLabel === undefined ? {} : { label: yLabel }),
          values: (_u, splits) => splits.map((v) => formatNumber(v)),
        },
      ],
      series: [
        {
          label: xKind === 'time' ? 'Time' : 'Step',
          ...(xKind === 'time' && timeLabel !== undefined
            ? { value: (_u: uPlot, v: number | null) => (v === null ? '—' : timeLabel(v)) }
            : {}),
        },
        ...order.map((i) => {
          const color = PALETTE[i % PALETTE.length] as string
          return {
            label: raw[i]?.label ?? '',
            stroke: color,
            width: 2,
            spanGaps: !stacked,
            ...(stacked ? { fill: `${color}cc` } : {}),
            points: { show: (data.x.length ?? 0) < 60 },
            value: (_u: uPlot, _v: number | null, _si: number, idx: number | null) =>
              idx === null ? '—' : formatNumber(raw[i]?.values[idx] ?? null),
          }
        }),
      ],
    }
    const plot = new uPlot(
      opts,
      [data.x, ...order.map((i) => plotted[i] as (number | null)[])] as uPlot.AlignedData,
      el,
    )
    plot.root.querySelector('canvas')?.setAttribute('aria-label', title)
    plot.root.querySelector('canvas')?.setAttribute('role', 'img')
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height }))
    resize.observe(el)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [data, xKind, stacked, title, height, timeZone, timeLabel, yLabel, testId])
  if (data.x.length === 0)
    return (
      <p class="muted" data-testid={`${testId}-empty`}>
        No data in this range.
      </p>
    )
  // `data-points`: how many x values the chart plots (every one a point of each series that has a value there).
  return <div class="chart" ref={host} data-testid={testId} data-points={data.x.length} />
}
