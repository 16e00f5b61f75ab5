import { PageHeader } from '../components/ui.js';

export default function Page() {
  return <PageHeader title="Lead" />;
}
