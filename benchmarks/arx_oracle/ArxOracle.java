// Oracle values from ARX 3.9.2 (the classes in ../shared/tools/arx/arx-bench.jar) for k-map with a cell
// size estimator and for the population-uniqueness estimators. Developer tool only.
//   java -cp arx-bench.jar ArxOracle.java kmap DATA QIS K SIGNIFICANCE POP|f=FRACTION poisson|ztp SUPPRESSION
//   java -cp arx-bench.jar ArxOracle.java uniq DATA QIS POP|f=FRACTION
//   java -cp arx-bench.jar ArxOracle.java hist POPULATION 1:c1,2:c2,...   (a class-size histogram)
//   java -cp arx-bench.jar ArxOracle.java hists < lines of "POPULATION 1:c1,2:c2,..."
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.deidentifier.arx.*;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.criteria.KMap;
import org.deidentifier.arx.metric.Metric;
import org.deidentifier.arx.risk.RiskModelPopulationUniqueness;

public class ArxOracle {
    public static void main(String[] a) throws Exception {
        String mode = a[0];
        if (mode.equals("hists")) {  // hists: lines "POPULATION 1:5,2:3,..." on stdin, one JSON line each
            java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.trim().split(" ");
                if (f.length == 2) main(new String[] {"hist", f[0], f[1]});
            }
            return;
        }
        if (mode.equals("hist")) {  // hist POPULATION 1:5,2:3,...
            com.carrotsearch.hppc.IntIntOpenHashMap map = new com.carrotsearch.hppc.IntIntOpenHashMap();
            for (String p : a[2].split(",")) { String[] kv = p.split(":"); map.put(Integer.parseInt(kv[0]), Integer.parseInt(kv[1])); }
            org.deidentifier.arx.risk.RiskModelHistogram h = new org.deidentifier.arx.risk.RiskModelHistogram(map);
            RiskModelPopulationUniqueness u = new RiskModelPopulationUniqueness(ARXPopulationModel.create(Long.parseLong(a[1])), h, ARXSolverConfiguration.create());
            System.out.println("{\"pitman\": " + u.getNumUniqueTuplesPitman() + ", \"zayatz\": " + u.getNumUniqueTuplesZayatz()
                + ", \"snb\": " + u.getNumUniqueTuplesSNB() + ", \"dankar\": " + u.getNumUniqueTuplesDankar()
                + ", \"dankar_model\": \"" + u.getPopulationUniquenessModel() + "\"}");
            return;
        }
        File dataFile = new File(a[1]);
        String[] qis = a[2].split(",");
        Data data = Data.create(dataFile, StandardCharsets.UTF_8, ';');
        DataDefinition def = data.getDefinition();
        String dir = dataFile.getParent();
        for (int c = 0; c < data.getHandle().getNumColumns(); c++)
            def.setAttributeType(data.getHandle().getAttributeName(c), AttributeType.INSENSITIVE_ATTRIBUTE);
        for (String q : qis)
            def.setAttributeType(q, Hierarchy.create(new File(dir, "adult_hierarchy_" + q + ".csv"), StandardCharsets.UTF_8, ';'));
        int n = data.getHandle().getNumRows();
        if (mode.equals("kmap")) {
            int k = Integer.parseInt(a[3]);
            double sig = Double.parseDouble(a[4]);
            ARXPopulationModel pop = population(a[5], n);
            KMap.CellSizeEstimator est = a[6].equals("poisson") ? KMap.CellSizeEstimator.POISSON
                                                                : KMap.CellSizeEstimator.ZERO_TRUNCATED_POISSON;
            KMap model = new KMap(k, sig, pop, est);
            ARXConfiguration config = ARXConfiguration.create();
            config.addPrivacyModel(model);
            config.setSuppressionLimit(Double.parseDouble(a[7]));
            config.setQualityModel(Metric.createDiscernabilityMetric(false));
            ARXResult result = new ARXAnonymizer().anonymize(data, config);
            KMap used = result.getConfiguration().getPrivacyModel(KMap.class);
            StringBuilder sb = new StringBuilder();
            sb.append("{\"population\": ").append(pop.getPopulationSize())
              .append(", \"derived_k\": ").append(used.getDerivedK())
              .append(", \"type1_error\": ").append(used.getType1Error())
              .append(", \"solution\": ");
            ARXLattice.ARXNode opt = result.getGlobalOptimum();
            if (opt == null) sb.append("null"); else {
                sb.append(Arrays.toString(opt.getTransformation()));
                DataHandle out = result.getOutput();
                long suppressed = 0;
                for (int r = 0; r < out.getNumRows(); r++) if (out.isOutlier(r)) suppressed++;
                sb.append(", \"metric\": \"").append(opt.getHighestScore()).append("\", \"suppressed\": ").append(suppressed);
            }
            System.out.println(sb.append("}"));
        } else {
            ARXPopulationModel pop = population(a[3], n);
            RiskModelPopulationUniqueness u = data.getHandle().getRiskEstimator(pop).getPopulationBasedUniquenessRisk();
            System.out.println("{\"population\": " + pop.getPopulationSize()
                + ", \"pitman\": " + u.getNumUniqueTuplesPitman()
                + ", \"zayatz\": " + u.getNumUniqueTuplesZayatz()
                + ", \"snb\": " + u.getNumUniqueTuplesSNB()
                + ", \"dankar\": " + u.getNumUniqueTuplesDankar()
                + ", \"dankar_model\": \"" + u.getPopulationUniquenessModel() + "\"}");
        }
    }

    static ARXPopulationModel population(String s, int n) {
        if (s.equals("usa")) return ARXPopulationModel.create(ARXPopulationModel.Region.USA);
        if (s.startsWith("f=")) return ARXPopulationModel.create(n, Double.parseDouble(s.substring(2)));
        return ARXPopulationModel.create(Long.parseLong(s));
    }
}
