/** The parts of ECharts the dashboard draws with (tree-shaken: the rest is never shipped). */
import { init, use } from 'echarts/core';
import { BarChart, FunnelChart, HeatmapChart, LineChart, PieChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent, VisualMapComponent, DatasetComponent, TitleComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

use([BarChart, FunnelChart, HeatmapChart, LineChart, PieChart, GridComponent, LegendComponent, TooltipComponent, VisualMapComponent, DatasetComponent, TitleComponent, CanvasRenderer]);

export { init };
