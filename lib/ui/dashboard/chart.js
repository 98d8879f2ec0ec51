import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { useEffect, useRef } from 'preact/hooks'
import { fmtInt, fmtTime } from '../shared/format.js'
import { html } from '../shared/html.js'

const GOOD = '#16a34a'
const BAD = '#dc2626'

function css(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim()
  return v || fallback
}

/** 24-hour tick labels: `HH:MM` (with seconds for short ranges, with the date for long ones). */
function timeLabels(u, splits, utc) {
  const span = (u.scales.x.max ?? 0) - (u.scales.x.min ?? 0)
  return splits.map((t) => {
    const text = fmtTime(t * 1000, utc) // YYYY-MM-DD HH:MM:SS.mmm
    if (span > 2 * 86_400) return `${text.slice(5, 10)} ${text.slice(11, 16)}`
    if (span <= 20 * 60) return text.slice(11, 19)
    return text.slice(11, 16)
  })
}

function options(width, { utc, labels, onSelect }) {
  const axis = css('--pico-muted-color', '#64748b')
  const grid = css('--pico-muted-border-color', '#e2e8f0')
  return {
    width,
    height: 220,
    padding: [12, 12, 0, 4],
    tzDate: utc ? (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC') : undefined,
    cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
    select: { show: true },
    legend: { show: true, live: true },
    // bad rows on their own scale (right): a handful next to thousands of good events still shows
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] }, bad: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] } },
    axes: [
      { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, font: '12px system-ui, sans-serif', values: (u, splits) => timeLabels(u, splits, utc) },
      { stroke: GOOD, grid: { stroke: grid, width: 1 }, ticks: { show: false }, size: 48, font: '12px system-ui, sans-serif', values: (_u, vals) => vals.map((v) => (Number.isInteger(v) ? fmtInt(v) : '')) },
      { scale: 'bad', side: 1, stroke: BAD, grid: { show: false }, ticks: { show: false }, size: 44, font: '12px system-ui, sans-serif', values: (_u, vals) => vals.map((v) => (Number.isInteger(v) ? fmtInt(v) : '')) },
    ],
    series: [
      { label: utc ? 'bucket (UTC)' : 'bucket', value: (_u, t) => (t === null || t === undefined ? '—' : fmtTime(t * 1000, utc).slice(0, 19)) },
      { label: labels[0], stroke: GOOD, fill: 'rgba(22,163,74,0.7)', width: 0, paths: uPlot.paths.bars({ size: [0.42, 40, 1], align: -1 }), points: { show: false }, value: (_u, v) => fmtInt(v) },
      { label: labels[1], scale: 'bad', stroke: BAD, fill: 'rgba(220,38,38,0.72)', width: 0, paths: uPlot.paths.bars({ size: [0.42, 40, 1], align: 1 }), points: { show: false }, value: (_u, v) => fmtInt(v) },
    ],
    hooks: {
      setSelect: [
        (u) => {
          if (u.select.width > 4) {
            const from = u.posToVal(u.select.left, 'x') * 1000
            const to = u.posToVal(u.select.left + u.select.width, 'x') * 1000
            u.setSelect({ left: 0, width: 0, top: 0, height: 0 }, false)
            onSelect(from, to)
          }
        },
      ],
    },
  }
}

/**
 * Good events and bad rows per bucket, as bars side by side (uPlot). Drag
 * across the chart to zoom into that time range.
 */
export function Histogram({ good, bad, intervalMs, from, to, utc, labels, onSelect }) {
  const box = useRef(null)
  const plot = useRef(null)
  const select = useRef(onSelect)
  select.current = onSelect

  const data = () => {
    const keys = [...new Set([...good.map((b) => b.key), ...bad.map((b) => b.key)])].sort((a, b) => a - b)
    const g = new Map(good.map((b) => [b.key, b.doc_count]))
    const r = new Map(bad.map((b) => [b.key, b.doc_count]))
    return [keys.map((k) => (k + intervalMs / 2) / 1000), keys.map((k) => g.get(k) ?? 0), keys.map((k) => r.get(k) ?? 0)]
  }

  useEffect(() => {
    const el = box.current
    const u = new uPlot(options(el.clientWidth || 800, { utc, labels, onSelect: (a, b) => select.current(a, b) }), data(), el)
    u.setScale('x', { min: from / 1000, max: to / 1000 })
    plot.current = u
    const ro = new ResizeObserver(() => {
      const w = el.clientWidth
      if (w > 0 && Math.abs(w - u.width) > 1) u.setSize({ width: w, height: 220 })
    })
    ro.observe(el)
    return () => {
      ro.disconnect()
      u.destroy()
      plot.current = null
    }
  }, [utc, labels[0], labels[1]])

  useEffect(() => {
    const u = plot.current
    if (!u) return
    u.setData(data(), false)
    u.setScale('x', { min: from / 1000, max: to / 1000 })
  }, [good, bad, from, to, intervalMs])

  return html`<div class="over-time-chart" ref=${box} data-testid="histogram"></div>`
}
