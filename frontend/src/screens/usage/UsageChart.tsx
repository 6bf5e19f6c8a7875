// One echarts chart, loaded only with the usage screens (React.lazy): the
// parts it draws with are imported one by one from echarts/core so the
// bundle carries bar and line charts, their axes and tooltip, and the SVG
// renderer, not the whole library. Colours come from the theme's CSS
// variables, read again when the theme changes.
import { BarChart, LineChart } from 'echarts/charts'
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components'
import * as echarts from 'echarts/core'
import { SVGRenderer } from 'echarts/renderers'
import { useEffect, useRef } from 'react'
import { useTheme } from '../../lib/theme'

echarts.use([BarChart, LineChart, GridComponent, TooltipComponent, LegendComponent, SVGRenderer])

/** What a chart draws: one value per category for each series. */
export interface ChartData {
  kind: 'bar' | 'line'
  categories: string[]
  series: { name: string; values: number[] }[]
  /** How a value reads on the axis and in the tooltip. */
  format: (n: number) => string
  /** Bars laid sideways, category names down the left (a ranking). */
  horizontal?: boolean
}

/** How tall a chart is drawn: a ranking by its number of bars, a time chart fixed. */
export const chartHeight = (d: ChartData) => (d.horizontal ? Math.min(360, 64 + 30 * d.categories.length) : 240)

function themeColors() {
  const css = getComputedStyle(document.documentElement)
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback
  return { text: v('--text-2', '#4a4a57'), muted: v('--muted', '#666673'), border: v('--border', '#e2e2e8'), panel: v('--panel', '#fff'),
    series: [v('--accent', '#4f46e5'), v('--ok', '#137236'), v('--warn', '#a24a06'), v('--run', '#1d58d6')] }
}

/** A category name cut to fit the left of a ranking. */
const short = (s: string) => (s.length > 18 ? `${s.slice(0, 17)}…` : s)

/** The echarts drawing of data; the caller names it for assistive technology (role="img" with a summary). */
export default function UsageChart({ data }: { data: ChartData }) {
  const el = useRef<HTMLDivElement>(null)
  const chart = useRef<echarts.ECharts | null>(null)
  const theme = useTheme()

  useEffect(() => {
    const node = el.current
    if (!node) return
    const c = echarts.init(node, undefined, { renderer: 'svg' })
    chart.current = c
    // The chart follows its card's width (a phone turned, the inspector opened).
    const ro = typeof ResizeObserver === 'undefined' ? undefined : new ResizeObserver(() => c.resize())
    ro?.observe(node)
    return () => {
      ro?.disconnect()
      c.dispose()
      chart.current = null
    }
  }, [])

  useEffect(() => {
    const c = chart.current
    if (!c) return
    c.resize()
    const col = themeColors()
    const categoryAxis = {
      type: 'category' as const, data: data.categories,
      axisLabel: { color: col.text, formatter: data.horizontal ? short : undefined, hideOverlap: true },
      axisLine: { lineStyle: { color: col.border } }, axisTick: { show: false },
      ...(data.horizontal ? { inverse: true } : {}),
    }
    const valueAxis = {
      type: 'value' as const,
      axisLabel: { color: col.muted, formatter: (n: number) => data.format(n), hideOverlap: true },
      splitLine: { lineStyle: { color: col.border } },
    }
    c.setOption({
      color: col.series,
      animation: false,
      grid: { left: 8, right: 16, top: data.series.length > 1 ? 32 : 12, bottom: 8, containLabel: true },
      tooltip: {
        trigger: 'axis', backgroundColor: col.panel, borderColor: col.border, textStyle: { color: col.text },
        valueFormatter: (n: unknown) => data.format(Number(n)),
      },
      legend: data.series.length > 1 ? { top: 0, textStyle: { color: col.text } } : { show: false },
      xAxis: data.horizontal ? valueAxis : categoryAxis,
      yAxis: data.horizontal ? categoryAxis : valueAxis,
      series: data.series.map((s) => ({
        name: s.name, type: data.kind, data: s.values,
        ...(data.kind === 'bar' && data.series.length > 1 ? { stack: 'total' } : {}),
        ...(data.kind === 'line' ? { showSymbol: data.categories.length <= 31, areaStyle: { opacity: 0.12 } } : { barMaxWidth: 28 }),
      })),
    }, true)
  }, [data, theme])

  // The drawing is the image its box names: nothing inside it is read out.
  return <div ref={el} className="usage-chart-canvas" aria-hidden="true" style={{ height: chartHeight(data) }} />
}
